package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phc-project/phc/internal/vault"
)

// TestExportImport: the PCP archive is the owner's backup of this vault: it
// restores into the same vault directly (replace lists what it erased);
// another vault holds it in the quarantine, and after adoption (identities
// mapped) every field, version and provenance is equal.
func TestExportImport(t *testing.T) {
	t.Parallel()
	a := startHarness(t, "")
	a.must(201, "POST", "/phc/v1/personas", a.owner, map[string]string{"id": "learning", "name": "Learning"}, nil)
	a.must(200, "PUT", "/context/fields/addresses.current.city", a.owner, map[string]any{"value": "Lisbon"}, nil)
	a.must(200, "PUT", "/context/fields/addresses.current.city", a.owner, map[string]any{"value": "Porto"}, nil)
	a.must(200, "PUT", "/context/fields/preferences.tea", a.owner, map[string]any{"value": "earl grey", "sensitivity": "public"}, nil)
	tutor := a.consumer("tutor", "learning.*", "write")
	a.grant("tutor", "learning", "contribute", map[string]any{"keys": []string{"learning.*"}})
	var p struct {
		ProposalID string `json:"proposal_id"`
	}
	a.must(201, "POST", "/phc/v1/proposals", tutor, map[string]any{"key": scheduleKey, "value": scheduleValue, "kind": "goal",
		"assertion": "reported", "evidence": []map[string]string{{"ref": "chat://42"}}, "reported": map[string]string{"run_id": "run-7"},
		"restrictions": []map[string]any{{"type": "no_training", "mandatory": true}}}, &p)
	a.must(200, "POST", "/phc/v1/proposals/"+p.ProposalID+"/confirm", a.owner, map[string]any{"personas": []string{"learning"}}, nil)

	archive := a.must(200, "GET", "/context/export", a.owner, nil, nil)
	if strings.Contains(string(archive), "Porto") || strings.Contains(string(archive), "learning") {
		t.Fatal("the archive holds plaintext")
	}
	sk, err := vault.ReadSecretKeyFile(a.dir)
	if err != nil {
		t.Fatal(err)
	}

	b := startHarnessAs(t, "", "an entirely different passphrase")
	b.constraint(401, "unauthenticated", "POST", "/context/import", b.owner,
		map[string]any{"archive": json.RawMessage(archive), "mode": "merge", "password": "an entirely different passphrase", "secret_key": sk})
	b.constraint(400, "invalid_request", "POST", "/context/import", b.owner,
		map[string]any{"archive": map[string]string{"format": "other"}, "mode": "merge", "password": testPassword, "secret_key": sk})
	// Another vault's archive is a migration, not a restore: it is held in
	// the quarantine, nothing of it in use until adopted.
	var res struct {
		Imported, Skipped, Removed, Held int
		RemovedClaims                    []string `json:"removed_claims"`
	}
	b.must(200, "POST", "/context/import", b.owner,
		map[string]any{"archive": json.RawMessage(archive), "mode": "replace", "password": testPassword, "secret_key": sk}, &res)
	if res.Held != 4 || res.Imported != 0 || res.Removed != 0 { // three claims and the persona
		t.Fatalf("import of another vault's archive = %+v; want 4 held, nothing imported or removed", res)
	}
	type versions struct {
		Claims []map[string]any `json:"claims"`
	}
	strip := func(cs []map[string]any) []map[string]any {
		for _, c := range cs {
			delete(c, "revision") // re-stamped by the importing vault
		}
		return cs
	}
	var la, lb struct {
		Claims []map[string]any `json:"claims"`
	}
	b.must(200, "GET", "/phc/v1/claims", b.owner, nil, &lb)
	if len(lb.Claims) != 0 {
		t.Fatalf("held claims are in use: %v", lb.Claims)
	}
	b.consumer("tutor", "*", "read")
	b.must(200, "POST", "/phc/v1/quarantine/adopt", b.owner, map[string]any{"all": true,
		"identities": map[string]string{"foreign:archive/owner": "owner", "foreign:archive/tutor": "tutor"}}, nil)
	a.must(200, "GET", "/phc/v1/claims", a.owner, nil, &la)
	b.must(200, "GET", "/phc/v1/claims", b.owner, nil, &lb)
	// Adopted, a claim is never below the key's default tier here: the
	// tea sent public is standard on B (its owner may lower it again).
	want := make([]map[string]any, len(la.Claims))
	for i, c := range la.Claims {
		want[i] = map[string]any{}
		for k, v := range c {
			want[i][k] = v
		}
		if c["key"] == "preferences.tea" {
			want[i]["sensitivity"] = "standard"
		}
	}
	if diff := cmp.Diff(strip(want), strip(lb.Claims)); diff != "" {
		t.Fatalf("claims after import and adoption (-exported +adopted):\n%s", diff)
	}
	for _, c := range la.Claims {
		id := c["id"].(string)
		var va, vb versions
		a.must(200, "GET", "/phc/v1/claims/"+id+"/versions", a.owner, nil, &va)
		b.must(200, "GET", "/phc/v1/claims/"+id+"/versions", b.owner, nil, &vb)
		for _, v := range va.Claims {
			if v["key"] == "preferences.tea" {
				v["sensitivity"] = "standard"
			}
		}
		if diff := cmp.Diff(strip(va.Claims), strip(vb.Claims)); diff != "" {
			t.Fatalf("versions of %s (-exported +adopted):\n%s", id, diff)
		}
	}
	// An archive of B's that names A's salt is not A's: it does not open as
	// A's own, nor with B's credentials under A's salt.
	archB := b.must(200, "GET", "/context/export", b.owner, nil, nil)
	skB, err := vault.ReadSecretKeyFile(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	var fa, fb map[string]any
	json.Unmarshal(archive, &fa)
	json.Unmarshal(archB, &fb)
	fb["salt"] = fa["salt"]
	forged, _ := json.Marshal(fb)
	a.constraint(401, "unauthenticated", "POST", "/context/import", a.owner,
		map[string]any{"archive": json.RawMessage(forged), "mode": "replace", "password": "an entirely different passphrase", "secret_key": skB})
	// This vault's own archive restores directly: merge skips what is
	// here; replace says what it erased.
	res.Held = 0
	a.must(200, "POST", "/context/import", a.owner,
		map[string]any{"archive": json.RawMessage(archive), "mode": "merge", "password": testPassword, "secret_key": sk}, &res)
	if res.Imported != 0 || res.Skipped != 3 || res.Held != 0 {
		t.Fatalf("merge of the own archive = %+v", res)
	}
	a.must(200, "PUT", "/context/fields/work.extra", a.owner, map[string]any{"value": 1}, nil)
	res.RemovedClaims = nil
	a.must(200, "POST", "/context/import", a.owner,
		map[string]any{"archive": json.RawMessage(archive), "mode": "replace", "password": testPassword, "secret_key": sk}, &res)
	if res.Removed != 4 || res.Imported != 3 || len(res.RemovedClaims) != 4 {
		t.Fatalf("replace = %+v; want 4 removed (listed) and 3 imported", res)
	}
	var lr struct {
		Claims []map[string]any `json:"claims"`
	}
	a.must(200, "GET", "/phc/v1/claims", a.owner, nil, &lr)
	if diff := cmp.Diff(strip(la.Claims), strip(lr.Claims)); diff != "" {
		t.Fatalf("claims after replace (-exported +restored):\n%s", diff)
	}
	// And it all survives a restart (the stored version sequences are whole).
	dir := a.dir
	a.stop()
	a = startHarness(t, dir)
	a.must(200, "GET", "/phc/v1/claims", a.owner, nil, &lr)
	if len(lr.Claims) != 3 {
		t.Fatalf("after restart %d claims", len(lr.Claims))
	}
	tutor = a.consumer("tutor2", "learning.*", "read")
	a.constraint(403, "session_required", "GET", "/context/export", tutor, nil)
}
