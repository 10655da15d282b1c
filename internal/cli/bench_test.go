package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Benchmarks of docs/design.md §8 over real loopback HTTP against an in-process
// daemon (bbolt file, vault, receipts by group commit). docs/benchmarks/history.md
// records their figures. Run them with
//
//	go test -run '^$' -bench 'BenchmarkPropose|BenchmarkContext' -benchtime 3s -count 3 ./internal/cli/

// parallel runs fn(i) for i in [0, n) on workers goroutines and returns the
// first error.
func parallel(n, workers int, fn func(i int) error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// BenchmarkPropose measures durable proposal ingest (docs/design.md §8: ≥ 2,000
// proposals/s with many clients, every 201 durable): 25×GOMAXPROCS
// concurrent contributors POST /phc/v1/proposals with a write token.
func BenchmarkPropose(b *testing.B) {
	h := startHarness(b, "")
	tok := h.consumer("bench-writer", "notes.*", "write")
	h.grant("bench-writer", "notes", "contribute", map[string]any{"keys": []string{"notes.*"}})
	var seq atomic.Int64
	b.SetParallelism(25)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			body := fmt.Appendf(nil,
				`{"key":"notes.bench_%d","value":"Benchmark note number %d","kind":"note","assertion":"reported","reported":{"app":"bench"}}`,
				n, n)
			status, raw, err := h.send("POST", "/phc/v1/proposals", tok, body)
			if err != nil || status != http.StatusCreated {
				b.Errorf("POST /phc/v1/proposals = %d %s, %v; want 201", status, raw, err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "proposals/s")
}

// contextFields is the number of granted fields BenchmarkContext reads.
const contextFields = 300

// contextFixture sets up contextFields confirmed claims in a persona that
// a reader is granted for a purpose, and returns the reader's token and the
// context path. Setup goes through the API: propose, then confirm.
func contextFixture(b *testing.B) (h *harness, token, path string) {
	b.Helper()
	h = startHarness(b, "")
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]string{"id": "work", "name": "Work"}, nil)
	token = h.consumer("bench-reader", "*", "read")
	h.grant("bench-reader", "assist", "read", map[string]any{"personas": []string{"work"}})

	categories := []string{"preferences", "goals", "projects", "commitments", "relationships", "learning"}
	ids := make([]string, contextFields)
	err := parallel(contextFields, 16, func(i int) error {
		body, err := json.Marshal(map[string]any{
			"key":       fmt.Sprintf("%s.item_%03d", categories[i%len(categories)], i),
			"value":     fmt.Sprintf("Context field %d: a sentence of realistic length about the owner's work.", i),
			"kind":      "preference",
			"assertion": "reported",
			"evidence":  []map[string]string{{"ref": fmt.Sprintf("chat://bench/%d", i)}},
		})
		if err != nil {
			return err
		}
		status, raw, err := h.send("POST", "/phc/v1/proposals", h.owner, body)
		if err != nil || status != http.StatusCreated {
			return fmt.Errorf("propose %d = %d %s, %v", i, status, raw, err)
		}
		var p struct {
			ProposalID string `json:"proposal_id"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		ids[i] = p.ProposalID
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	confirm := []byte(`{"personas":["work"]}`)
	err = parallel(contextFields, 16, func(i int) error {
		status, raw, err := h.send("POST", "/phc/v1/proposals/"+ids[i]+"/confirm", h.owner, confirm)
		if err != nil || status != http.StatusOK {
			return fmt.Errorf("confirm %d = %d %s, %v", i, status, raw, err)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}

	path = "/phc/v1/context?purpose=assist"
	var ctx contextAnswer
	h.must(200, "GET", path, token, nil, &ctx)
	if len(ctx.Claims) != contextFields {
		b.Fatalf("GET %s returns %d claims; want %d", path, len(ctx.Claims), contextFields)
	}
	return h, token, path
}

// BenchmarkContext measures one recipient's sequential GET /phc/v1/context
// of 300 granted fields over loopback (docs/design.md §8: p50 < 1 ms, p99 < 3 ms),
// each read receipted durably before it is answered.
func BenchmarkContext(b *testing.B) {
	h, token, path := contextFixture(b)
	latency(b, h, token, path)
}

// BenchmarkPCPContext is the same read through the PCP facade:
// GET /context/context, the 300 fields grouped by category.
func BenchmarkPCPContext(b *testing.B) {
	h, token, _ := contextFixture(b)
	latency(b, h, token, "/context/context")
}

// BenchmarkPCPField reads one field through the PCP facade:
// GET /context/fields/{id}, receipted like every read.
func BenchmarkPCPField(b *testing.B) {
	h, token, path := contextFixture(b)
	var ctx contextAnswer
	h.must(200, "GET", path, token, nil, &ctx)
	latency(b, h, token, "/context/fields/"+ctx.Claims[0].Key)
}

// latency sends sequential GETs of path and reports p50/p99 (ns) besides
// ns/op, and the answer's size.
func latency(b *testing.B, h *harness, token, path string) {
	var durs []time.Duration
	var buf bytes.Buffer
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		status, err := h.sendInto(&buf, "GET", path, token, nil)
		d := time.Since(start)
		if err != nil || status != http.StatusOK {
			b.Fatalf("GET %s = %d %.200s, %v; want 200", path, status, buf.Bytes(), err)
		}
		durs = append(durs, d)
	}
	size := buf.Len()
	slices.Sort(durs)
	b.ReportMetric(float64(percentile(durs, 0.50).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(percentile(durs, 0.99).Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(size), "resp-bytes")
}

// BenchmarkContextParallel measures read throughput with receipts durably
// recorded (docs/design.md §8: ≥ 5,000 req/s on 2 cores): 16×GOMAXPROCS readers
// GET the 300-field context concurrently.
func BenchmarkContextParallel(b *testing.B) {
	h, token, path := contextFixture(b)
	readParallel(b, h, token, path)
}

// readParallel has 16×GOMAXPROCS clients GET path concurrently and reports
// req/s.
func readParallel(b *testing.B, h *harness, token, path string) {
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var buf bytes.Buffer
		for pb.Next() {
			status, err := h.sendInto(&buf, "GET", path, token, nil)
			if err != nil || status != http.StatusOK {
				b.Errorf("GET %s = %d %.200s, %v; want 200", path, status, buf.Bytes(), err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkReadParallel measures read throughput with receipts durably
// recorded for single-claim reads (GET /phc/v1/claims/{id}?purpose=), the
// common read of an application that needs one field: 16×GOMAXPROCS
// readers, each read answered only after its receipt is durable.
func BenchmarkReadParallel(b *testing.B) {
	h, token, path := contextFixture(b)
	var ctx contextAnswer
	h.must(200, "GET", path, token, nil, &ctx)
	readParallel(b, h, token, "/phc/v1/claims/"+ctx.Claims[0].ID+"?purpose=assist")
}

// percentile returns the q-quantile (nearest rank) of sorted durations.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// BenchmarkOwnerWrite measures durable owner writes (issue 10: ≥ 1,000/s
// at one client): sequential PUT /context/fields/{id} as the owner, each
// answered once its group is on disk. Half write a new field, half a new
// version of one of 100 existing fields, like `phc bench`'s owner-write.
func BenchmarkOwnerWrite(b *testing.B) { ownerWrites(b, 1) }

// BenchmarkOwnerWriteParallel is BenchmarkOwnerWrite with 16 clients
// (issue 10: ≥ 5,000/s).
func BenchmarkOwnerWriteParallel(b *testing.B) { ownerWrites(b, 16) }

// ownerWrites has clients PUT owner fields concurrently and reports req/s
// and the process's CPU time (user and system, client and daemon) per
// write, which the machine's other load disturbs less than req/s.
func ownerWrites(b *testing.B, clients int) {
	h := startHarness(b, "")
	var seq atomic.Int64
	put := func(buf *bytes.Buffer) error {
		i := seq.Add(1)
		key := fmt.Sprintf("notes.w%04d", (i/2)%100)
		if i%2 == 0 {
			key = fmt.Sprintf("notes.n%08d", i/2)
		}
		body := fmt.Appendf(nil, `{"value":"Owner note number %d, a sentence of realistic length."}`, i)
		status, err := h.sendInto(buf, "PUT", "/context/fields/"+key, h.owner, body)
		if err != nil || status != http.StatusOK {
			return fmt.Errorf("PUT /context/fields/%s = %d %.200s, %v; want 200", key, status, buf.Bytes(), err)
		}
		return nil
	}
	for range 200 { // the existing fields, and a warm-up
		if err := put(new(bytes.Buffer)); err != nil {
			b.Fatal(err)
		}
	}
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	if clients == 1 {
		b.SetParallelism(1)
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	if clients == 1 {
		var buf bytes.Buffer
		for b.Loop() {
			if err := put(&buf); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.RunParallel(func(pb *testing.PB) {
			var buf bytes.Buffer
			for pb.Next() {
				if err := put(&buf); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
