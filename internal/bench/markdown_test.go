package bench

import (
	"strings"
	"testing"
	"time"
)

// TestWriteMarkdown renders a run of two sizes and a comparison as the
// table of BENCHMARKS.md: each figure against its target, a verdict only
// where the run measured what the target names.
func TestWriteMarkdown(t *testing.T) {
	r := &Report{Machine: Machine{CPUs: 2, CPU: "AMD EPYC", OS: "linux/amd64", Kernel: "6.1", GoVersion: "go1.26.8",
		Daemon: "/tmp/phc", DaemonGo: "go1.26.8", DaemonRev: "90f5da7a1b2c", Time: time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)}}
	r.Config.Sizes, r.Config.DurationS, r.Config.Clients, r.Config.Growth = []int{300, 1000000}, 3, 16, 2000
	r.Sizes = []*Size{
		{Claims: 300, LoadAvg: "1.20 0.80 0.50", Workloads: []Workload{
			{Name: "context300", Clients: 1, ReqPerSec: 1500, P50Ms: 0.6, P99Ms: 1.3},
			{Name: "context300", Clients: 16, ReqPerSec: 4709.4, P50Ms: 3, P99Ms: 9},
			{Name: "field1", Clients: 1, ReqPerSec: 2000},
			{Name: "field1", Clients: 16, ReqPerSec: 12732},
			{Name: "owner-write", Clients: 1, ReqPerSec: 1972},
			{Name: "owner-write", Clients: 16, ReqPerSec: 7219},
			{Name: "propose", Clients: 16, ReqPerSec: 8120, Errors: 2, Requests: 24000},
			{Name: "traverse", Clients: 1, ReqPerSec: 1558, P50Ms: 0.5, P99Ms: 1.25},
		}, Restarts: []Restart{{ReadyMs: 150, KDFMs: 90, IdleMem: &Mem{AnonMiB: 19.8}}, {ReadyMs: 160, KDFMs: -1}},
			Growth: &Growth{Reads: 2000, UsedBytesPerRead: 326.4}, Traverse: &GraphSetup{Edges: 161}},
		{Claims: 1000000, Workloads: []Workload{
			{Name: "context300", Clients: 1, P50Ms: 0.9, P99Ms: 6},
			{Name: "owner-write", Clients: 1, ReqPerSec: 900},
		}, Restarts: []Restart{{ReadyMs: 1000, KDFMs: 100, IdleMem: &Mem{AnonMiB: 530}}}},
	}
	r.Compare = &Comparison{Rounds: 5, Other: CompareSide{Name: "pvault"}, Rows: []CompareRow{
		{Workload: "context300", Clients: 1, Ratio: Median{ReqPerSec: 7.8}, PHCMedian: Median{ReqPerSec: 1061}, OtherMedian: Median{ReqPerSec: 136}},
	}}
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	want := "Measured with `phc bench --claims 300,1000000 --duration 3s --growth 2000 --pvault … --markdown` on " +
		"2 cores (AMD EPYC), linux/amd64, kernel 6.1, bench go1.26.8, daemon go1.26.8 at 90f5da7a1b2c, 2026-12-03T17:00:00Z.\n" + `
| figure | claims | measured | target | verdict |
|---|---|---|---|---|
| authorized ` + "`GET /context/context`" + `, 300 fields, 1 client: p50 / p99 | 300 | 0.600 / 1.300 ms | p50 < 1 ms, p99 < 3 ms (300 claims) | met |
| read throughput, receipts durable: one field a read, 16 clients | 300 | 12,732/s | ≥ 5,000 req/s | met |
| read throughput, receipts durable: 300 fields a read, 16 clients | 300 | 4,709/s | ≥ 5,000 req/s | **not met** |
| ` + "`POST /phc/v1/proposals`" + ` durable, 16 clients | 300 | 8,120/s | ≥ 2,000/s | met |
| owner writes, 1 client | 300 | 1,972/s | ≥ 1,000/s | met |
| owner writes, 16 clients | 300 | 7,219/s | ≥ 5,000/s at 16 clients | met |
| permission-checked 3-hop traversal, 1 client: p50 / p99 | 300 | 0.500 / 1.250 ms (161 edges) | p95 ≤ 5 ms (100k-claim graph) | — (another graph) |
| restart: process start to the first read, after the KDF | 300 | 60 ms | ≤ 2 s (1,000,000 claims) | — |
| idle RSS after the restart, anonymous | 300 | 19.8 MiB | ≤ 500 MB (1,000,000 claims) | — |
| store growth per repeated 300-field read (2,000 reads) | 300 | 326 B | ≤ 1 KiB | met |
| authorized ` + "`GET /context/context`" + `, 300 fields, 1 client: p50 / p99 | 1,000,000 | 0.900 / 6.000 ms | p50 < 1 ms, p99 < 3 ms (300 claims) | — |
| … its p50 over the p50 at 300 claims | 1,000,000 | 1.50× | ≤ 1.5× (1,000,000 claims) | met |
| owner writes, 1 client | 1,000,000 | 900/s | ≥ 1,000/s | **not met** |
| restart: process start to the first read, after the KDF | 1,000,000 | 900 ms | ≤ 2 s (1,000,000 claims) | met |
| idle RSS after the restart, anonymous | 1,000,000 | 530.0 MiB | ≤ 500 MB (1,000,000 claims) | **not met** |
| context300 against pvault, 1 client (medians of 5 rounds) | 300 | 7.80× (1,061 against 136 req/s) | ≥ 5× | met |

Load average when each size began: 1.20 0.80 0.50 at 300 claims.

Note: propose ×16 at 300 claims: 2 errors of 24,000 requests.
`
	if got := b.String(); got != want {
		t.Errorf("WriteMarkdown =\n%s\nwant\n%s", got, want)
	}
}
