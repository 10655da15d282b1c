//go:build slow

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/daemon/daemontest"
)

// crashGraphSequences is how many confirm, summary and correct sequences
// TestCrashGraphConsistency waits for before it kills the daemon.
const crashGraphSequences = 50

// TestCrashGraphConsistency: kill -9 during a stream of confirms,
// corrections and summaries (each of which changes the graph through the
// outbox), then check the stopped daemon's data dir offline with phc check,
// restart, and check again online. Every acknowledged correction must have
// left the summary derived from the corrected version stale.
//
// The kill comes once crashGraphSequences correction sequences (and twice
// as many field writes, and as many reads) have been acknowledged.
func TestCrashGraphConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a workload; skipped in -short mode")
	}
	bin := daemontest.BuildPHC(t)
	dir := filepath.Join(t.TempDir(), "data")
	client := &http.Client{Timeout: 60 * time.Second}
	d := startPHC(t, bin, dir, "first")

	var ent struct {
		Entity struct {
			ID string `json:"id"`
		} `json:"entity"`
	}
	d.must(t, client, 201, "POST", "/phc/v1/entities", d.owner, map[string]string{"type": "person", "name": "Ana"}, &ent)

	// A reader, so that the load mixes receipted reads (each naming a
	// disclosed set) with the writes.
	d.must(t, client, 200, "PUT", "/phc/v1/settings", d.owner, map[string]any{"reads_per_minute": 10000000}, nil)
	d.must(t, client, 201, "POST", "/phc/v1/consumers", d.owner, map[string]string{"name": "reader", "secret": "reader-secret-0123456789"}, nil)
	d.must(t, client, 201, "POST", "/phc/v1/grants", d.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "reader"}, "purpose": "assist", "operations": []string{"read"},
		"selectors": map[string]any{"keys": []string{"mixed.*"}}, "expires_at": "2099-01-01T00:00:00Z"}, nil)
	var tok struct {
		Token string `json:"token"`
	}
	d.must(t, client, 201, "POST", "/context/tokens/service", "", map[string]string{
		"consumer": "reader", "secret": "reader-secret-0123456789", "scope": "*", "mode": "read"}, &tok)

	// The workload runs until enough of each kind of request has been
	// acknowledged (enough closes), or until every worker has stopped
	// (stopped closes; each stops at its first failure), and is then
	// killed while it goes on.
	type done struct{ summary, claim string }
	var mu sync.Mutex
	var corrected []done           // summaries whose parent was corrected, acknowledged
	written := map[string]string{} // owner field writes acknowledged: key → value
	reads := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	enough, stopped := make(chan struct{}), make(chan struct{})
	var enoughOnce sync.Once
	counted := func() { // with mu held
		if len(corrected) >= crashGraphSequences && len(written) >= 2*crashGraphSequences && reads >= crashGraphSequences {
			enoughOnce.Do(func() { close(enough) })
		}
	}
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key, value := fmt.Sprintf("mixed.w%d.k%d", w, i), fmt.Sprintf("value %d of writer %d", i, w)
				if try(client, d, "PUT", "/context/fields/"+key, map[string]string{"value": value}, nil) != nil {
					return
				}
				mu.Lock()
				written[key] = value
				counted()
				mu.Unlock()
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			req, _ := http.NewRequest("GET", d.base+"/phc/v1/context?purpose=assist", nil)
			req.Header.Set("Authorization", "Bearer "+tok.Token)
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode == 200 {
				mu.Lock()
				reads++
				counted()
				mu.Unlock()
			}
		}
	}()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("people.w%d.n%d", w, i)
				var prp struct {
					ID string `json:"proposal_id"`
				}
				if try(client, d, "POST", "/phc/v1/proposals", map[string]any{
					"key": key, "kind": "relationship", "assertion": "reported",
					"value": map[string]string{"from": "self", "to": ent.Entity.ID, "relation": "friend"},
				}, &prp) != nil {
					return
				}
				var clm struct {
					Claim struct {
						ID string `json:"id"`
					} `json:"claim"`
				}
				if try(client, d, "POST", "/phc/v1/proposals/"+prp.ID+"/confirm", map[string]any{"personas": []string{}}, &clm) != nil {
					return
				}
				var sum struct {
					Summary struct {
						ID string `json:"id"`
					} `json:"summary"`
				}
				if try(client, d, "POST", "/phc/v1/summaries", map[string]any{
					"value": "s", "derived_from": []string{clm.Claim.ID + "@1"},
				}, &sum) != nil {
					return
				}
				if try(client, d, "PUT", "/phc/v1/claims/"+clm.Claim.ID, map[string]any{
					"value": map[string]string{"from": "self", "to": ent.Entity.ID, "relation": "colleague"},
				}, nil) != nil {
					return
				}
				mu.Lock()
				corrected = append(corrected, done{sum.Summary.ID, clm.Claim.ID})
				counted()
				mu.Unlock()
			}
		}(w)
	}
	go func() { wg.Wait(); close(stopped) }()
	select {
	case <-enough:
	case <-stopped:
		t.Errorf("every worker stopped before the kill; daemon log:\n%s", d.log())
	}
	d.kill(t)
	close(stop)
	wg.Wait()
	if len(corrected) == 0 {
		t.Fatalf("nothing was acknowledged before the kill; daemon log:\n%s", d.log())
	}
	t.Logf("%d confirm, summary and correct sequences, %d field writes and %d context reads acknowledged before kill -9",
		len(corrected), len(written), reads)

	// Offline, on the killed daemon's data dir.
	out, err := runPHC(bin, "check", "--data", dir)
	if err != nil || !strings.Contains(out, "ok: the graph agrees with the store") {
		t.Fatalf("phc check --data after kill -9: %v\n%s", err, out)
	}

	d2 := startPHC(t, bin, dir, "second")
	out, err = runPHC(bin, "check", "--data", dir)
	if err != nil || !strings.Contains(out, "ok: the graph agrees with the store") {
		t.Fatalf("phc check against the restarted daemon: %v\n%s", err, out)
	}
	for key, value := range written {
		var got struct {
			Value string `json:"value"`
		}
		d2.must(t, client, 200, "GET", "/context/fields/"+key, d2.owner, nil, &got)
		if got.Value != value {
			t.Errorf("field %s after restart = %q; want the acknowledged %q", key, got.Value, value)
		}
	}
	var v struct {
		OK    bool   `json:"ok"`
		Count uint64 `json:"count"`
	}
	d2.must(t, client, 200, "GET", "/phc/v1/receipts/verify", d2.owner, nil, &v)
	if !v.OK || v.Count < uint64(reads) {
		t.Errorf("receipts after restart: %+v; want a verified chain holding the %d acknowledged reads", v, reads)
	}
	for _, c := range corrected {
		var got struct {
			Summary struct {
				Status string `json:"status"`
				Stale  struct {
					Parent string `json:"parent"`
				} `json:"stale"`
			} `json:"summary"`
		}
		d2.must(t, client, 200, "GET", "/phc/v1/summaries/"+c.summary, d2.owner, nil, &got)
		if got.Summary.Status != "stale" || got.Summary.Stale.Parent != c.claim+"@1" {
			t.Errorf("summary %s after restart = %+v; want stale because of %s@1", c.summary, got.Summary, c.claim)
		}
	}
	edges, cursor := 0, ""
	for {
		var page struct {
			Edges      []json.RawMessage `json:"edges"`
			NextCursor string            `json:"next_cursor"`
		}
		d2.must(t, client, 200, "GET", "/phc/v1/graph/neighbors/self?limit=500&cursor="+cursor, d2.owner, nil, &page)
		edges += len(page.Edges)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if edges < len(corrected) {
		t.Errorf("%d edges around self after restart; want at least the %d acknowledged", edges, len(corrected))
	}
}

// try sends one owner request; an error means the daemon is gone.
func try(client *http.Client, d *phcProcess, method, path string, body, out any) error {
	return d.request(client, method, path, body, out)
}

// runPHC runs the binary with the crash test's password and returns its
// combined output.
func runPHC(bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PHC_PASSWORD="+daemonPassword)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
