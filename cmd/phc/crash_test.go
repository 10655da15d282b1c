//go:build slow

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/phc-project/phc/internal/daemon/daemontest"
)

// Crash consistency (docs/design.md §9, acceptance 9): 50 concurrent contributors
// propose, and once 20,000 proposals have been acknowledged the daemon is
// killed with SIGKILL while they go on sending; after a restart on the same
// data dir, every proposal that was answered 201 is in the review queue
// with its key and value, and the receipt chain verifies.
//
// The test builds and runs the real binary, so that the kill hits a separate
// process exactly as kill -9 would. The workload is a count of acknowledged
// proposals, not a length of time: nothing here depends on the clock.

const (
	crashContributors = 50
	crashAcks         = 20000 // acknowledged proposals before the kill
	crashConsumer     = "crashbot"
	crashSecret       = "secret-of-crashbot-0123456789"
)

func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a workload; skipped in -short mode")
	}
	bin := daemontest.BuildPHC(t)
	dir := filepath.Join(t.TempDir(), "data")

	// The transport is shared by the workload and the checks; 50 clients
	// keep their connections alive.
	tr := &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}

	d := startPHC(t, bin, dir, "first")

	// Setup: a consumer with a write token, and a contribute grant on notes.*;
	// the load is far above the default ten writes a minute and 100 pending
	// proposals per app.
	tomorrow := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	d.must(t, client, 200, "PUT", "/phc/v1/settings", d.owner, map[string]int{"writes_per_minute": 10_000_000, "pending_proposals_per_app": 10_000_000}, nil)
	d.must(t, client, 201, "POST", "/phc/v1/consumers", d.owner,
		map[string]string{"name": crashConsumer, "secret": crashSecret}, nil)
	var tok struct {
		Token string `json:"token"`
	}
	d.must(t, client, 201, "POST", "/context/tokens/service", "",
		map[string]any{"consumer": crashConsumer, "secret": crashSecret, "scope": "notes.*", "ttl": 3600, "mode": "write"}, &tok)
	d.must(t, client, 201, "POST", "/phc/v1/grants", d.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": crashConsumer}, "purpose": "notes",
		"operations": []string{"contribute"}, "selectors": map[string]any{"keys": []string{"notes.*"}},
		"expires_at": tomorrow}, nil)

	// The workload: every contributor proposes distinct keys and values
	// until stop is closed, and keeps what was acknowledged with a 201.
	// enough closes at the crashAcks-th acknowledgement, turnedDown at
	// the first refusal.
	type ack struct{ id, key, value string }
	acked := make([][]ack, crashContributors)
	var failures, refusals [crashContributors]int
	var firstErr, firstRefusal [crashContributors]error
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var acks atomic.Int64
	enough, turnedDown := make(chan struct{}), make(chan struct{})
	var enoughOnce, turnedDownOnce sync.Once
	start := time.Now()
	for i := range crashContributors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("notes.n%d_%d", i, j)
				value := fmt.Sprintf("value %d of contributor %d", j, i)
				id, err := proposeOnce(client, d.base, tok.Token, key, value)
				switch _, refused := errors.AsType[*refusal](err); {
				case refused:
					// The daemon answered, but not 201: a bug, whenever
					// it happens.
					if refusals[i] == 0 {
						firstRefusal[i] = err
					}
					refusals[i]++
					turnedDownOnce.Do(func() { close(turnedDown) })
					continue
				case err != nil:
					// Unacknowledged: after the kill every request fails.
					if failures[i] == 0 {
						firstErr[i] = err
					}
					failures[i]++
					continue
				}
				acked[i] = append(acked[i], ack{id: id, key: key, value: value})
				if acks.Add(1) == crashAcks {
					enoughOnce.Do(func() { close(enough) })
				}
			}
		}()
	}

	// Kill -9 while the contributors are still sending, then stop them.
	// A refusal or a daemon gone early ends the workload too, and the
	// checks below say what went wrong.
	select {
	case <-enough:
	case <-turnedDown:
	case <-d.exited:
		t.Errorf("phc serve exited during the workload: %v\n%s", d.waitErr, d.log())
	}
	elapsed := time.Since(start)
	d.kill(t)
	close(stop)
	wg.Wait()
	tr.CloseIdleConnections()

	total := 0
	for i := range acked {
		total += len(acked[i])
	}
	t.Logf("%d contributors, %v until kill -9: %d proposals acknowledged (%.0f proposals/s)",
		crashContributors, elapsed.Round(time.Millisecond), total, float64(total)/elapsed.Seconds())
	for i, err := range firstRefusal {
		if err != nil {
			t.Errorf("contributor %d: %d proposals refused, first: %v", i, refusals[i], err)
		}
	}
	if total == 0 {
		for i, err := range firstErr {
			if err != nil {
				t.Logf("contributor %d: %d failures, first: %v", i, failures[i], err)
				break
			}
		}
		t.Fatalf("no proposal was acknowledged before the kill; daemon log:\n%s", d.log())
	}

	// The killed daemon's store file is structurally sound (docs/design.md §9: the
	// equivalent of phc check).
	checkStoreFile(t, filepath.Join(dir, "phc.db"))

	// Restart on the same data dir and read the review queue.
	d = startPHC(t, bin, dir, "restart")
	var review struct {
		Proposals []struct {
			ID     string          `json:"proposal_id"`
			Status string          `json:"status"`
			Key    string          `json:"key"`
			Value  json.RawMessage `json:"value"`
		} `json:"proposals"`
	}
	d.must(t, client, 200, "GET", "/phc/v1/review", d.owner, nil, &review)
	type stored struct{ key, value string }
	byID := make(map[string]stored, len(review.Proposals))
	for _, p := range review.Proposals {
		var v string
		if err := json.Unmarshal(p.Value, &v); err != nil {
			t.Errorf("proposal %s: value %s is not a string: %v", p.ID, p.Value, err)
			continue
		}
		byID[p.ID] = stored{key: p.Key, value: v}
	}
	missing, wrong := 0, 0
	for i := range acked {
		for _, a := range acked[i] {
			got, ok := byID[a.id]
			switch {
			case !ok:
				if missing < 10 {
					t.Errorf("acknowledged proposal %s (%s) is missing after kill -9 and restart", a.id, a.key)
				}
				missing++
			case got.key != a.key || got.value != a.value:
				if wrong < 10 {
					t.Errorf("proposal %s after restart = {%q, %q}; want {%q, %q}", a.id, got.key, got.value, a.key, a.value)
				}
				wrong++
			}
		}
	}
	if missing > 0 || wrong > 0 {
		t.Errorf("%d of %d acknowledged proposals missing, %d altered", missing, total, wrong)
	}
	t.Logf("after restart: %d proposals in the review queue (%d acknowledged, %d committed but unacknowledged)",
		len(review.Proposals), total, len(review.Proposals)-total)

	var v struct {
		OK       bool     `json:"ok"`
		Count    uint64   `json:"count"`
		Problems []string `json:"problems"`
	}
	d.must(t, client, 200, "GET", "/phc/v1/receipts/verify", d.owner, nil, &v)
	if !v.OK {
		t.Errorf("receipts/verify after kill -9 = %+v; want ok", v)
	}
	if v.Count < uint64(total) {
		t.Errorf("receipts/verify counts %d receipts; want at least one per acknowledged proposal (%d)", v.Count, total)
	}

	// Killed again, most likely before its flusher copied into the file
	// what the restart read from the log (it waits 2 s), the daemon leaves
	// those records, and its own, to a third start.
	d.kill(t)
	d = startPHC(t, bin, dir, "second restart")
	var again struct {
		Proposals []struct {
			ID string `json:"proposal_id"`
		} `json:"proposals"`
	}
	d.must(t, client, 200, "GET", "/phc/v1/review", d.owner, nil, &again)
	if len(again.Proposals) != len(review.Proposals) {
		t.Errorf("after a second kill -9 and restart: %d proposals in the review queue; want %d", len(again.Proposals), len(review.Proposals))
	}
}

// checkStoreFile runs bbolt's consistency check over the store file of a
// daemon that is not running.
func checkStoreFile(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("open the store after kill -9: %v", err)
	}
	defer db.Close()
	// A writable transaction keeps bbolt's check safe; it is rolled back.
	tx, err := db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	n := 0
	for err := range tx.Check() {
		if n < 10 {
			t.Errorf("store check after kill -9: %v", err)
		}
		n++
	}
}

// proposeOnce sends one proposal and returns its id if the answer was 201
// with a well-formed body; anything else is an error.
func proposeOnce(client *http.Client, base, token, key, value string) (string, error) {
	body, err := json.Marshal(map[string]any{
		"key": key, "value": value, "kind": "note", "assertion": "reported",
		"reported": map[string]string{"app": "crash-test"},
	})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequest("POST", base+"/phc/v1/proposals", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusCreated {
		return "", &refusal{status: resp.StatusCode, body: raw}
	}
	var out struct {
		ProposalID string `json:"proposal_id"`
		Status     string `json:"status"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("201 with a malformed body %q: %w", raw, err)
	}
	if out.ProposalID == "" || out.Status != "proposed" {
		return "", fmt.Errorf("201 with an unexpected body %s", raw)
	}
	return out.ProposalID, nil
}

// refusal is an answer other than 201 to a proposal.
type refusal struct {
	status int
	body   []byte
}

func (r *refusal) Error() string { return fmt.Sprintf("status %d: %s", r.status, r.body) }

// request sends an owner request that must succeed (2xx) and decodes the
// body into out.
func (p *phcProcess) request(client *http.Client, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+p.owner)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &refusal{status: resp.StatusCode, body: raw}
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}
