package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/phc-project/phc/internal/vault"
)

type wireClaim struct {
	ID           string          `json:"id"`
	Version      int             `json:"version"`
	Key          string          `json:"key"`
	Value        json.RawMessage `json:"value"`
	Kind         string          `json:"kind"`
	Assertion    string          `json:"assertion"`
	Status       string          `json:"status"`
	Personas     []string        `json:"personas"`
	WrittenBy    string          `json:"written_by"`
	Confirmation struct {
		Status string `json:"status"`
	} `json:"confirmation"`
	Producer struct {
		Authenticated struct {
			Kind string `json:"kind"`
			ID   string `json:"id"`
		} `json:"authenticated"`
		Reported map[string]string `json:"reported"`
	} `json:"producer"`
}

type contextAnswer struct {
	Revision uint64      `json:"revision"`
	Claims   []wireClaim `json:"claims"`
}

const scheduleKey = "learning.spanish.schedule"
const scheduleValue = "Practice Spanish twice a week"

// TestFirstWorkflow is the synthetic first workflow (acceptance
// 1–7), over real HTTP against a real daemon, including a restart.
func TestFirstWorkflow(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	tomorrow := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)

	// 1. Consumers, grants, a proposal.
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]string{"id": "learning", "name": "Learning"}, nil)
	tutor := h.consumer("tutor", "learning.*", "write")
	coach := h.consumer("coach", "*", "read")
	budget := h.consumer("budget", "*", "read")
	h.must(201, "POST", "/phc/v1/grants", h.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "tutor"}, "purpose": "learning",
		"operations": []string{"contribute"}, "selectors": map[string]any{"keys": []string{"learning.*"}},
		"expires_at": tomorrow}, nil)
	var coachGrant struct {
		ID       string `json:"id"`
		Revision uint64 `json:"revision"`
	}
	h.must(201, "POST", "/phc/v1/grants", h.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "coach"}, "purpose": "learning",
		"operations": []string{"read"}, "selectors": map[string]any{"personas": []string{"learning"}},
		"expires_at": tomorrow}, &coachGrant)

	var proposed struct {
		ProposalID string `json:"proposal_id"`
		Status     string `json:"status"`
		Revision   uint64 `json:"revision"`
	}
	h.must(201, "POST", "/phc/v1/proposals", tutor, map[string]any{
		"key": scheduleKey, "value": scheduleValue, "kind": "goal", "assertion": "reported",
		"evidence": []map[string]string{{"ref": "chat://tutor/session/42"}},
		"reported": map[string]string{"app": "tutor", "run_id": "run-7", "model": "tutor-model-1"},
	}, &proposed)
	if proposed.Status != "proposed" || proposed.ProposalID == "" || proposed.Revision == 0 {
		t.Fatalf("proposal = %+v", proposed)
	}

	// 2. While pending, nobody sees it.
	var ctx contextAnswer
	h.must(200, "GET", "/phc/v1/context?purpose=learning", coach, nil, &ctx)
	if len(ctx.Claims) != 0 {
		t.Fatalf("coach sees %d claims while pending", len(ctx.Claims))
	}
	var owned struct {
		Claims []wireClaim `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims?key="+scheduleKey, h.owner, nil, &owned)
	if len(owned.Claims) != 0 {
		t.Fatalf("owner lists %d active claims while pending", len(owned.Claims))
	}
	// tutor may contribute, not read: a write token cannot read at all, and a
	// read-write token finds nothing, because no grant lets tutor read.
	h.constraint(403, "mode_denied", "GET", "/phc/v1/context?purpose=learning", tutor, nil)
	tutorRW := h.token("tutor", "secret-of-tutor-0123456789", "learning.*", "read-write")
	h.must(200, "GET", "/phc/v1/context?purpose=learning", tutorRW, nil, &ctx)
	if len(ctx.Claims) != 0 {
		t.Fatalf("tutor reads %d claims", len(ctx.Claims))
	}
	h.constraint(403, "session_required", "POST", "/phc/v1/proposals/"+proposed.ProposalID+"/confirm", tutor,
		map[string]any{"personas": []string{"learning"}})
	var review struct {
		Proposals []struct {
			ID       string          `json:"proposal_id"`
			Key      string          `json:"key"`
			Value    json.RawMessage `json:"value"`
			Producer struct {
				Authenticated struct{ ID string } `json:"authenticated"`
			} `json:"producer"`
		} `json:"proposals"`
	}
	h.must(200, "GET", "/phc/v1/review", h.owner, nil, &review)
	if len(review.Proposals) != 1 || review.Proposals[0].ID != proposed.ProposalID || review.Proposals[0].Producer.Authenticated.ID != "tutor" {
		t.Fatalf("review = %+v", review)
	}

	// 3. Confirm into learning; coach sees it for learning only.
	var confirmed struct {
		Claim    wireClaim `json:"claim"`
		Revision uint64    `json:"revision"`
	}
	h.must(200, "POST", "/phc/v1/proposals/"+proposed.ProposalID+"/confirm", h.owner,
		map[string]any{"personas": []string{"learning"}}, &confirmed)
	claimID := confirmed.Claim.ID
	h.must(200, "GET", "/phc/v1/context?purpose=learning", coach, nil, &ctx)
	if len(ctx.Claims) != 1 {
		t.Fatalf("coach sees %d claims after confirm; want 1", len(ctx.Claims))
	}
	got := ctx.Claims[0]
	if got.ID != claimID || got.Producer.Authenticated.ID != "tutor" || got.Producer.Authenticated.Kind != "consumer" ||
		got.Assertion != "reported" || got.Confirmation.Status != "confirmed" || got.Kind != "goal" ||
		string(got.Value) != `"`+scheduleValue+`"` || got.WrittenBy != "tutor" || got.Producer.Reported["run_id"] != "run-7" {
		t.Fatalf("coach's claim = %+v", got)
	}
	h.must(200, "GET", "/phc/v1/context?purpose=marketing", coach, nil, &ctx)
	if len(ctx.Claims) != 0 {
		t.Fatalf("coach with purpose marketing sees %d claims", len(ctx.Claims))
	}
	h.must(200, "GET", "/phc/v1/context?purpose=learning", budget, nil, &ctx)
	if len(ctx.Claims) != 0 {
		t.Fatalf("budget sees %d claims", len(ctx.Claims))
	}
	h.must(200, "GET", "/phc/v1/claims/"+claimID+"?purpose=learning", coach, nil, nil)
	hidden := h.constraint(404, "not_found", "GET", "/phc/v1/claims/"+claimID+"?purpose=learning", budget, nil)
	absent := h.constraint(404, "not_found", "GET", "/phc/v1/claims/clm_AAAAAAAAAAAAAAAAAAAAAAAAAA?purpose=learning", budget, nil)
	if !bytes.Equal(hidden, absent) {
		t.Fatalf("hidden 404 %q differs from absent 404 %q", hidden, absent)
	}
	h.must(200, "GET", "/phc/v1/context?purpose=learning", tutorRW, nil, &ctx)
	if len(ctx.Claims) != 0 {
		t.Fatalf("tutor reads %d claims after confirm", len(ctx.Claims))
	}
	hiddenTutor := h.constraint(404, "not_found", "GET", "/phc/v1/claims/"+claimID+"?purpose=learning", tutorRW, nil)
	if !bytes.Equal(hiddenTutor, absent) {
		t.Fatalf("tutor: hidden %q differs from absent %q", hiddenTutor, absent)
	}
	h.constraint(403, "session_required", "GET", "/phc/v1/claims?key="+scheduleKey, coach, nil)

	// 4. Correction: coach sees only version 2.
	var corrected struct {
		Claim    wireClaim `json:"claim"`
		Revision uint64    `json:"revision"`
	}
	h.must(200, "PUT", "/phc/v1/claims/"+claimID, h.owner, map[string]any{"value": "Practice Spanish three times a week"}, &corrected)
	if corrected.Claim.Version != 2 {
		t.Fatalf("correction version = %d; want 2", corrected.Claim.Version)
	}
	h.must(200, "GET", fmt.Sprintf("/phc/v1/context?purpose=learning&min_revision=%d", corrected.Revision), coach, nil, &ctx)
	if len(ctx.Claims) != 1 || ctx.Claims[0].Version != 2 || string(ctx.Claims[0].Value) != `"Practice Spanish three times a week"` {
		t.Fatalf("coach after correction = %+v", ctx.Claims)
	}
	var versions struct {
		Claims []wireClaim `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims/"+claimID+"/versions", h.owner, nil, &versions)
	if len(versions.Claims) != 2 || versions.Claims[0].Status != "superseded" || versions.Claims[1].Status != "active" {
		t.Fatalf("versions = %+v", versions.Claims)
	}

	// 5. Revoke coach's grant; at the revoke's revision coach gets nothing.
	var revoked struct {
		Revision uint64 `json:"revision"`
	}
	h.must(200, "DELETE", "/phc/v1/grants/"+coachGrant.ID, h.owner, nil, &revoked)
	if revoked.Revision <= corrected.Revision {
		t.Fatalf("revoke revision %d not after correction %d", revoked.Revision, corrected.Revision)
	}
	h.must(200, "GET", fmt.Sprintf("/phc/v1/context?purpose=learning&min_revision=%d", revoked.Revision), coach, nil, &ctx)
	if len(ctx.Claims) != 0 {
		t.Fatalf("coach after revoke sees %d claims", len(ctx.Claims))
	}
	h.constraint(409, "conflict", "GET", fmt.Sprintf("/phc/v1/context?purpose=learning&min_revision=%d", revoked.Revision+1000), coach, nil)

	// 6. Restart: everything is still there, and nothing is in plaintext.
	secretKey, err := vault.ReadSecretKeyFile(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	dir := h.dir
	h.stop()
	h = startHarness(t, dir)
	h.must(200, "GET", "/phc/v1/claims/"+claimID, h.owner, nil, &confirmed)
	if confirmed.Claim.Version != 2 || confirmed.Claim.Key != scheduleKey {
		t.Fatalf("after restart claim = %+v", confirmed.Claim)
	}
	h.must(200, "GET", "/phc/v1/claims/"+claimID+"/versions", h.owner, nil, &versions)
	if len(versions.Claims) != 2 || string(versions.Claims[0].Value) != `"`+scheduleValue+`"` {
		t.Fatalf("after restart versions = %+v", versions.Claims)
	}
	var grants struct {
		Grants []struct {
			ID        string  `json:"id"`
			RevokedAt *string `json:"revoked_at"`
		} `json:"grants"`
	}
	h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
	if len(grants.Grants) != 2 {
		t.Fatalf("after restart %d grants; want 2", len(grants.Grants))
	}
	h.stop()
	needles := map[string][]byte{
		"claim value":                        []byte(scheduleValue),
		"corrected":                          []byte("three times a week"),
		"password":                           []byte(testPassword),
		"secret key":                         []byte(secretKey),
		"consumer name":                      []byte("coach"),
		"persona id, purpose and key prefix": []byte("learning"),
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v; want 0600", path, info.Mode().Perm())
		}
		if d.Name() == "secret.key" {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for what, needle := range needles {
			if bytes.Contains(raw, needle) || bytes.Contains(bytes.ToLower(raw), bytes.ToLower(needle)) {
				t.Errorf("%s contains the %s in plaintext", filepath.Base(path), what)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// 7. The receipt chain verifies; one flipped byte in a receipt breaks it.
	h = startHarness(t, dir)
	var v struct {
		OK    bool   `json:"ok"`
		Count uint64 `json:"count"`
	}
	h.must(200, "GET", "/phc/v1/receipts/verify", h.owner, nil, &v)
	if !v.OK || v.Count < 10 {
		t.Fatalf("verify = %+v; want ok with the workflow's receipts", v)
	}
	var recs struct {
		Receipts []struct {
			Operation string   `json:"operation"`
			Records   []string `json:"records"`
			Decision  string   `json:"decision"`
		} `json:"receipts"`
	}
	h.must(200, "GET", "/phc/v1/receipts?limit=1000", h.owner, nil, &recs)
	for _, r := range recs.Receipts {
		for _, rec := range r.Records {
			if strings.Contains(rec, "Spanish") {
				t.Fatalf("a receipt holds a value: %+v", r)
			}
		}
	}
	h.stop()
	flipStoredByte(t, filepath.Join(dir, storeFile), "receipts", fmt.Sprintf("%016x", 3))
	h = startHarness(t, dir)
	h.must(200, "GET", "/phc/v1/receipts/verify", h.owner, nil, &v)
	if v.OK {
		t.Fatalf("verify after tampering = %+v; want not ok", v)
	}
}

// flipStoredByte flips one byte in the middle of the stored (sealed)
// value under bucket/key, directly in the bbolt file at path, as a bad
// disk would.
func flipStoredByte(t *testing.T, path, bucket, key string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return fmt.Errorf("no %s bucket", bucket)
		}
		v := b.Get([]byte(key))
		if v == nil {
			return fmt.Errorf("nothing stored under %s/%s", bucket, key)
		}
		flipped := append([]byte(nil), v...)
		flipped[len(flipped)/2] ^= 0x01
		return b.Put([]byte(key), flipped)
	})
	if err != nil {
		t.Fatal(err)
	}
}
