package httpapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/store"
)

// refusalReceipts reads the owner's receipts and returns the denied
// token.exchange ones, and the refusals they account for: one for each,
// plus the N of each that counts others ("count:N").
func (e *exchangeEnv) refusalReceipts() (receipts, refusals int) {
	e.t.Helper()
	status, body := e.do("GET", "/phc/v1/receipts?limit=1000", e.owner, "", nil)
	raw, _ := json.Marshal(body["receipts"])
	var rs []struct {
		Operation string   `json:"operation"`
		Decision  string   `json:"decision"`
		Recipient string   `json:"recipient"`
		Records   []string `json:"records"`
	}
	if err := json.Unmarshal(raw, &rs); status != 200 || err != nil {
		e.t.Fatalf("receipts = %d %v", status, body)
	}
	for _, r := range rs {
		if r.Operation != "token.exchange" || r.Decision != "deny" {
			continue
		}
		receipts++
		refusals++
		for _, rec := range r.Records {
			if n, ok := strings.CutPrefix(rec, "count:"); ok {
				c, err := strconv.Atoi(n)
				if err != nil || c < 1 {
					e.t.Fatalf("receipt records %v: a bad count", r.Records)
				}
				refusals += c - 1
				if r.Recipient != "" {
					e.t.Fatalf("a count receipt names recipient %q, one of those it counts", r.Recipient)
				}
			}
		}
	}
	return receipts, refusals
}

// storeBytes is the size of what the store holds of receipts: their
// bucket, their disclosed sets and checkpoints, and the meta bucket.
func storeBytes(t *testing.T, s *store.Memory) int {
	t.Helper()
	n := 0
	err := s.View(func(tx custodian.Tx) error {
		for _, b := range []string{"receipts", "disclosed_sets", "receipt_checkpoints", "meta"} {
			if err := tx.ForEach(b, func(k string, v []byte) error { n += len(k) + len(v); return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRefusedExchangeReceiptsCoalesce: forged ID tokens, each over a
// connection of its own (so that no limit on a connection's refused tokens
// slows them), grow the receipts by a bounded number, not one each: the
// first refusal of a minute from a host, for one class, has its receipt,
// the rest of that minute are counted in one receipt written when the
// minute has closed and the next refusal comes — and the counts add up to
// every refusal sent. It logs the store's bytes per refused request.
func TestRefusedExchangeReceiptsCoalesce(t *testing.T) {
	var st *store.Memory
	e := newExchangeEnv(t, func(c *custodian.Config) { st = c.Store.(*store.Memory) })
	p := newProvider(t)
	e.trustID(p)
	receipts0, refusals0 := e.refusalReceipts()
	bytes0 := storeBytes(t, st)

	const sent = 500
	forger := e.connection(true)
	forge := func(i int) {
		tok := p.sign(t, e.clock.Now(), idToken{sub: fmt.Sprintf("forged-%d", i), aud: []string{exchangeAudience}, rogue: true})
		if status, body := forger.exchange(tok); status != 401 || body["constraint"] != "unauthenticated" {
			t.Fatalf("forged token #%d = %d %v; want 401 unauthenticated", i+1, status, body)
		}
	}
	for i := range sent {
		forge(i)
	}
	bytes1 := storeBytes(t, st)
	// The minute closes; the next refusal writes its count.
	e.clock.Advance(time.Minute)
	forge(sent)

	receipts, refusals := e.refusalReceipts()
	if receipts-receipts0 > 4 {
		t.Errorf("%d refused exchanges wrote %d receipts; want at most 4", sent+1, receipts-receipts0)
	}
	if refusals-refusals0 != sent+1 {
		t.Errorf("the receipts account for %d refused exchanges; want %d", refusals-refusals0, sent+1)
	}
	t.Logf("%d refused exchanges: %d receipts, store +%d bytes (%.1f bytes per refused exchange; +%d bytes in the first minute)",
		sent+1, receipts-receipts0, storeBytes(t, st)-bytes0, float64(storeBytes(t, st)-bytes0)/float64(sent+1), bytes1-bytes0)
}
