package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// Issue 28, security review of "Auto-grant means what it says": a request
// granted at once adds a request and a grant record. Asked again, it joins
// the one already granted while its grant is in force; the grants made at
// once that are in force are bounded per app.

// appRecords counts consumer's context requests, as the owner lists them,
// and its grants made at once by the auto_grant, as the owner lists them.
func (h *harness) appRecords(consumer string) (requests, autoGrants int) {
	h.t.Helper()
	var list struct {
		Requests []struct {
			Consumer string `json:"consumer"`
		} `json:"requests"`
	}
	h.must(200, "GET", "/context/requests", h.owner, nil, &list)
	for _, r := range list.Requests {
		if r.Consumer == consumer {
			requests++
		}
	}
	var grants struct {
		Grants []struct {
			Recipient struct {
				ID string `json:"id"`
			} `json:"recipient"`
			Auto bool `json:"auto_approved"`
		} `json:"grants"`
	}
	h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
	for _, g := range grants.Grants {
		if g.Recipient.ID == consumer && g.Auto {
			autoGrants++
		}
	}
	return requests, autoGrants
}

// TestRepeatedAutoGrantJoins: an app asking again for what it was granted
// at once — the same scope (in any order), purpose and terms — is answered
// as the request already granted, with a token that reads, and adds no
// request nor grant; a different purpose is a new request.
func TestRepeatedAutoGrantJoins(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	for _, k := range []string{"preferences.timezone", "preferences.language"} {
		h.must(200, "PUT", "/context/fields/"+k, h.owner, map[string]any{"value": "v-" + k}, nil)
		h.must(200, "PUT", "/context/sensitivity/"+k, h.owner, map[string]any{"tier": "public"}, nil)
	}
	app := h.consumer("scheduler", "*", "read")
	ask := func(scope string) (requestAnswer, map[string]json.RawMessage) {
		t.Helper()
		var a requestAnswer
		var shape map[string]json.RawMessage
		raw := h.must(201, "POST", "/context/requests", app, map[string]any{"scope": scope, "purpose": "scheduling", "duration": "1h"}, &a)
		if err := json.Unmarshal(raw, &shape); err != nil {
			t.Fatal(err)
		}
		return a, shape
	}
	first, shape := ask("preferences.timezone,preferences.language")
	if first.Status != "approved" || first.Token == "" || first.ExpiresAt == "" {
		t.Fatalf("the first request = %+v; want approved at once, with a token", first)
	}
	fields := slices.Sorted(maps.Keys(shape))
	for i := range 5 {
		scope := "preferences.timezone,preferences.language"
		if i%2 == 1 {
			scope = "preferences.language,preferences.timezone"
		}
		again, againShape := ask(scope)
		if again.ID != first.ID || again.Status != "approved" || again.ExpiresAt != first.ExpiresAt || again.Token == "" {
			t.Fatalf("asked again (%d) = %+v; want the request %s, approved, expiring %s, with a token", i, again, first.ID, first.ExpiresAt)
		}
		if got := slices.Sorted(maps.Keys(againShape)); !slices.Equal(got, fields) {
			t.Fatalf("asked again, the answer has %v; the first had %v", got, fields)
		}
		var f wireField
		h.must(200, "GET", "/context/fields/preferences.language", again.Token, nil, &f)
	}
	if reqs, grants := h.appRecords("scheduler"); reqs != 1 || grants != 1 {
		t.Fatalf("6 identical requests left %d requests and %d grants made at once; want 1 and 1", reqs, grants)
	}
	// Polling the request still answers it (its token was issued).
	var polled requestAnswer
	h.must(200, "GET", "/context/requests/"+first.ID, app, nil, &polled)
	if polled.Status != "approved" || polled.Token != "" {
		t.Fatalf("poll = %+v", polled)
	}
	// Other terms are another request.
	var other requestAnswer
	h.must(201, "POST", "/context/requests", app, map[string]any{"scope": "preferences.timezone,preferences.language", "purpose": "calendar", "duration": "1h"}, &other)
	if other.ID == first.ID || other.Status != "approved" {
		t.Fatalf("another purpose = %+v; want a new request, approved", other)
	}
	// Once the owner revokes its grant, asking again files a new one.
	var grants struct {
		Grants []struct {
			ID      string `json:"id"`
			Purpose string `json:"purpose"`
		} `json:"grants"`
	}
	h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
	for _, g := range grants.Grants {
		if g.Purpose == "scheduling" {
			h.must(200, "DELETE", "/phc/v1/grants/"+g.ID, h.owner, nil, nil)
		}
	}
	if again, _ := ask("preferences.timezone,preferences.language"); again.ID == first.ID || again.Status != "approved" {
		t.Fatalf("asked again after the revocation = %+v; want a new request, approved", again)
	}
	if reqs, grants := h.appRecords("scheduler"); reqs != 3 || grants != 3 {
		t.Fatalf("%d requests and %d grants made at once; want 3 and 3", reqs, grants)
	}
}

// TestAutoGrantsBounded: an app holds at most 100 grants made at once in
// force; the next distinct request granted at once answers 429
// rate_limited with Retry-After, while a repeated one still joins its own,
// and a request that waits for the owner is still filed. Once one ends
// (here, revoked by the owner), the next is granted.
func TestAutoGrantsBounded(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/preferences.timezone", h.owner, map[string]any{"value": "UTC"}, nil)
	h.must(200, "PUT", "/context/sensitivity/preferences.timezone", h.owner, map[string]any{"tier": "public"}, nil)
	app := h.consumer("spammer", "*", "read")
	body := func(i int) map[string]any {
		return map[string]any{"scope": "preferences.timezone", "purpose": fmt.Sprintf("purpose %d", i), "duration": "1h"}
	}
	var first requestAnswer
	for i := range 100 {
		var a requestAnswer
		h.must(201, "POST", "/context/requests", app, body(i), &a)
		if a.Status != "approved" {
			t.Fatalf("request %d = %+v; want approved at once", i, a)
		}
		if i == 0 {
			first = a
		}
	}
	h.retryAfter("POST", "/context/requests", app, body(100))
	if reqs, grants := h.appRecords("spammer"); reqs != 100 || grants != 100 {
		t.Fatalf("past the bound: %d requests and %d grants made at once; want 100 and 100", reqs, grants)
	}
	var again requestAnswer
	h.must(201, "POST", "/context/requests", app, body(0), &again)
	if again.ID != first.ID || again.Status != "approved" {
		t.Fatalf("a repeated request at the bound = %+v; want request %s", again, first.ID)
	}
	h.must(202, "POST", "/context/requests", app, map[string]any{"scope": "identity.dob", "purpose": "forms"}, nil)
	var grants struct {
		Grants []struct {
			ID string `json:"id"`
		} `json:"grants"`
	}
	h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
	h.must(200, "DELETE", "/phc/v1/grants/"+grants.Grants[0].ID, h.owner, nil, nil)
	var next requestAnswer
	h.must(201, "POST", "/context/requests", app, body(100), &next)
	if next.Status != "approved" {
		t.Fatalf("after one grant ended = %+v; want approved", next)
	}
}

// TestJoinHiddenLikeAbsent: whether a request joins an earlier one depends
// on what the app knows, never on a field it may not see: a request for a
// field the owner raised out of its reach and one for an absent key are
// answered alike, and each joins its own first request.
func TestJoinHiddenLikeAbsent(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/preferences.diary", h.owner, map[string]any{"value": "private"}, nil)
	h.must(200, "PUT", "/context/sensitivity/preferences.diary", h.owner, map[string]any{"tier": "critical"}, nil)
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "standard"}, nil)
	app := h.consumer("app", "*", "read")
	type answer struct {
		Status  int
		ID      string
		State   string
		Tier    string
		Token   bool
		Expires bool
		Joined  bool
	}
	ask := func(key string) answer {
		t.Helper()
		var first answer
		for i := range 3 {
			status, raw := h.do("POST", "/context/requests", app, map[string]any{"scope": key, "purpose": "journal", "duration": "1h"})
			var a struct {
				requestAnswer
				Tier string `json:"tier"`
			}
			_ = json.Unmarshal(raw, &a)
			got := answer{Status: status, ID: a.ID, State: a.Status, Tier: a.Tier, Token: a.Token != "", Expires: a.ExpiresAt != ""}
			if i == 0 {
				first = got
				continue
			}
			got.Joined = got.ID == first.ID
			got.ID = ""
			if !got.Joined {
				t.Fatalf("%s asked again = %d %s; want it to join request %s", key, status, raw, first.ID)
			}
			first.ID = ""
			first.Joined = true
			if got != first {
				t.Fatalf("%s asked again = %+v; the first = %+v", key, got, first)
			}
			first.ID = a.ID
		}
		first.ID = ""
		return first
	}
	hidden, absent := ask("preferences.diary"), ask("preferences.nothing")
	if hidden != absent || hidden.State != "approved" || hidden.Tier != "standard" {
		t.Fatalf("a hidden field's requests = %+v, an absent one's %+v; want the same, approved at tier standard", hidden, absent)
	}
}
