package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Workload is the figures of one workload.
type Workload struct {
	Name      string  `json:"name"`
	Clients   int     `json:"clients"`
	Requests  int     `json:"requests"` // measured ones, warm-up excluded
	Errors    int     `json:"errors"`   // non-2xx answers and failed requests among them
	Seconds   float64 `json:"seconds"`
	ReqPerSec float64 `json:"req_per_sec"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
	// RespBytes is the size of the last answer a client read.
	RespBytes  int    `json:"resp_bytes"`
	FirstError string `json:"first_error,omitempty"`
	// CPUUsPerReq, DiskKBPerReq and DiskIOsPerReq are the daemon's CPU
	// time, and the bytes and write requests its data dir's device
	// completed (see usage), from the end of the warm-up to the end of
	// the run, divided by the measured requests (0 where Linux's /proc
	// and /sys cannot tell).
	CPUUsPerReq   float64 `json:"daemon_cpu_us_per_req,omitempty"`
	DiskKBPerReq  float64 `json:"disk_kb_per_req,omitempty"`
	DiskIOsPerReq float64 `json:"disk_writes_per_req,omitempty"`
}

// request makes one client's next request. It may return the same request
// every time when it has no body (the transport does not keep it).
type request func() (*http.Request, error)

// load describes a closed-loop run: clients, each on its own keep-alive
// connection, send one request after another for warm-up plus duration;
// the requests started after the warm-up count.
type load struct {
	name     string
	clients  int
	warmup   time.Duration
	duration time.Duration
	// count, when not 0, replaces the duration: each client sends count
	// requests, and all of them count (used by the growth run).
	count int
	// newClient returns client c's request maker.
	newClient func(c int) request
	// pid, when not 0, is the daemon's process, and diskStat its data
	// dir's device (see deviceStat): their usage over the measured part
	// goes into the figures.
	pid      int
	diskStat string
}

// sample is one client's measured requests.
type sample struct {
	lat      []time.Duration
	errors   int
	lastDone time.Time
	bytes    int
	firstErr string
}

// run runs the load and reports its figures.
func (l load) run(ctx context.Context) Workload {
	start := time.Now()
	measure := start.Add(l.warmup)
	end := measure.Add(l.duration)
	samples := make([]sample, l.clients)
	var wg sync.WaitGroup
	var used0 usage
	var used0Err error
	if l.pid != 0 {
		wg.Go(func() {
			if l.count == 0 {
				time.Sleep(time.Until(measure))
			}
			used0, used0Err = readUsage(l.pid, l.diskStat)
		})
	}
	for c := range l.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			samples[c] = l.client(ctx, l.newClient(c), measure, end)
		}()
	}
	wg.Wait()

	w := Workload{Name: l.name, Clients: l.clients}
	var all []time.Duration
	last := measure
	for _, s := range samples {
		all = append(all, s.lat...)
		w.Errors += s.errors
		if s.lastDone.After(last) {
			last = s.lastDone
		}
		w.RespBytes = max(w.RespBytes, s.bytes)
		if w.FirstError == "" {
			w.FirstError = s.firstErr
		}
	}
	w.Requests = len(all)
	w.Seconds = last.Sub(measure).Seconds()
	if w.Seconds > 0 {
		w.ReqPerSec = float64(w.Requests) / w.Seconds
	}
	slices.Sort(all)
	w.P50Ms = ms(percentile(all, 0.50))
	w.P99Ms = ms(percentile(all, 0.99))
	if len(all) > 0 {
		w.MaxMs = ms(all[len(all)-1])
	}
	if l.pid != 0 && used0Err == nil && w.Requests > 0 {
		if used1, err := readUsage(l.pid, l.diskStat); err == nil {
			// Clock ticks are hundredths of a second on Linux.
			w.CPUUsPerReq = float64(used1.cpuTicks-used0.cpuTicks) * 1e4 / float64(w.Requests)
			if used0.disk && used1.disk {
				w.DiskKBPerReq = float64(used1.writtenSectors-used0.writtenSectors) / 2 / float64(w.Requests)
				w.DiskIOsPerReq = float64(used1.writeIOs-used0.writeIOs) / float64(w.Requests)
			}
		}
	}
	return w
}

// client is one closed-loop client with its own connection and buffer.
func (l load) client(ctx context.Context, next request, measure, end time.Time) sample {
	tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: time.Minute}
	buf := make([]byte, 64<<10)
	s := sample{lat: make([]time.Duration, 0, 1024)}
	for i := 0; ctx.Err() == nil; i++ {
		if l.count > 0 {
			if i >= l.count {
				break
			}
		} else if !time.Now().Before(end) {
			break
		}
		req, err := next()
		if err != nil {
			s.errors++
			s.note(err.Error())
			break
		}
		t := time.Now()
		status, n, err := do(cl, req, buf)
		done := time.Now()
		if l.count == 0 && t.Before(measure) {
			continue // warm-up
		}
		s.lat = append(s.lat, done.Sub(t))
		s.lastDone = done
		switch {
		case err != nil:
			s.errors++
			s.note(fmt.Sprintf("%s %s: %v", req.Method, req.URL.Path, err))
			// A daemon that is gone answers at once: do not spin.
			time.Sleep(time.Millisecond)
		case status < 200 || status > 299:
			s.errors++
			s.note(fmt.Sprintf("%s %s = %d %s", req.Method, req.URL.Path, status, snippet(buf[:min(n, len(buf))], 200)))
		default:
			s.bytes = n
		}
	}
	return s
}

func (s *sample) note(msg string) {
	if s.firstErr == "" {
		s.firstErr = msg
	}
}

// do sends req and reads the whole answer through buf (its start stays in
// buf), and returns the status and the answer's length.
func do(cl *http.Client, req *http.Request, buf []byte) (status, n int, err error) {
	resp, err := cl.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	for {
		// Past the buffer's end, keep reading into its second half: the
		// first half keeps the answer's start, for an error's text.
		off := n
		if off >= len(buf) {
			off = len(buf) / 2
		}
		k, err := resp.Body.Read(buf[off:])
		n += k
		if errors.Is(err, io.EOF) {
			return resp.StatusCode, n, nil
		}
		if err != nil {
			return resp.StatusCode, n, err
		}
	}
}

// percentile is the q-quantile of sorted by nearest rank: the smallest
// value with at least q of the values at or below it.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
