// Package bench is phc bench: it measures a phc daemon from a separate
// process, at several vault sizes, as docs/design.md §8 asks ("all figures come
// from phc bench in a separate process").
//
// For each vault size [Run] creates a fresh data dir, starts the daemon
// (`phc serve`, the password in PHC_PASSWORD, a free loopback port) as a
// child process, and then talks to it over its HTTP API only:
//
//   - Seeding: N active claims, of which exactly [ReadSet] (work.f000 …
//     work.f299) are readable by a consumer "reader" (a read grant on work.*
//     for purpose assist); the rest (bulk.k…) are claims it may not read.
//     Proposals are sent concurrently and confirmed in bulk when the daemon
//     has a bulk route, else one by one, concurrently. After seeding, the
//     reader's GET /context/context must return exactly ReadSet fields.
//   - Workloads, each a closed loop of C clients, each client on its own
//     keep-alive connection, after an unmeasured warm-up: context300 (the
//     reader's 300-field GET /context/context), field1 (GET
//     /context/fields/work.f000), owner-write (PUT /context/fields/… as the
//     owner, new and existing keys alternating), propose (POST
//     /phc/v1/proposals with a write token) and traverse (the owner's
//     3-hop GET /phc/v1/graph/neighbors/self over a small graph), and with
//     --sustain D owner-sustain (owner-write for D, long enough for the
//     disk's write-back to weigh in). Each reports requests, req/s, exact
//     p50 and p99, non-2xx answers, and per request the daemon's CPU time
//     (/proc/PID/stat) and the bytes and write requests the block device
//     of its data dir completed (/sys/dev/block/…/stat, whoever wrote
//     them), over the measured part; Linux only.
//   - Settling: after seeding and after each restart the bench waits (at
//     most three minutes) until the daemon uses less than a tenth of a core
//     over half a second, so that its background work (a snapshot of the
//     claim metas after many writes, collecting the unlock's garbage) does
//     not fall into the next measurement; a wait over a second is noted.
//   - Memory: the daemon's RSS, anonymous and file-mapped (bbolt's mmap)
//     apart, after seeding and idle after a restart (Linux /proc only).
//   - Restart: SIGTERM, wait, start again; the time from the process start
//     to the reader's first 200, which includes the Argon2id KDF, measured
//     alone as well.
//   - Growth: store size (file and bbolt high-water mark) and RSS before
//     and after N sequential 300-field reads; bytes of store per read; then
//     a restart.
//
// With --pvault BIN or --pcp-target URL (see [CompareConfig]) the bench
// then compares context300 with another PCP server — pvault, the PCP
// reference implementation (github.com/lovincyrus/personal-vault), or any
// server already running — on two fresh 300-field vaults: phc's, seeded
// as above, and the other's, seeded through the PCP API only (the owner's
// POST …/unlock, PUT …/fields/work.f000 … work.f299 with the same values,
// a reader registered as a consumer where the server has
// POST …/consumers/register, and its read token of scope work.* from
// POST …/tokens/service), its reader's GET …/context checked to hold
// exactly those 300 fields. The routes are the spec's /context/… or, where
// only those answer, pvault's /vault/…. pvault init reads its password
// from a terminal only: the bench gives it a pseudo-terminal (Linux). Each
// round runs context300 at 1 and C clients on both servers, one after the
// other, the side that goes first alternating; the table shows each
// side's medians over the rounds and phc's over the other's.
//
// Figures go to a plain table per size, to JSON ([Report]) and, with
// --markdown, to a Markdown table against the design's targets
// ([Report.WriteMarkdown]), which BENCHMARKS.md keeps. The
// daemon's output is discarded but for its log's tail, shown when it
// fails; no token, secret or password is ever printed.
package bench
