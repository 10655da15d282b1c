package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcHeadroom is the least heap growth the daemon allows between two
// collections. With Go's default (GOGC=100: grow by the live heap) a vault
// of a few hundred claims, whose live heap is a few MiB, collected every
// few 300-field reads, about a fifth of a read's CPU. A large vault's live
// heap is larger than the headroom, and GOGC=100 applies as usual.
const gcHeadroom = 64 << 20

// bulkHeadroom is how far above the live heap the daemon's memory may
// grow: tuneGC sets the runtime's soft memory limit to the live heap plus
// this after every collection, so that bulk work (an import of 100,000
// memories, an adopt of all of them) collects its garbage before it
// doubles the heap, and the process stays within this of what it holds.
const bulkHeadroom = 128 << 20

var tuneOnce sync.Once

// gcSentinel is a 40-byte object with a pointer: never a tiny allocation.
type gcSentinel struct {
	_ *byte
	_ [32]byte
}

// tuneGC sets GOGC after each collection so that the next one comes after
// at least gcHeadroom of new allocation: GOGC = max(100, headroom/live).
// While something else has set GOGC (holdGC, around the unlock's load,
// turns it off), it leaves GOGC alone; a GOGC in the environment turns it
// off. The process's memory is at most the live heap plus the headroom (or twice the live heap) between collections; idle, the
// runtime returns what is unused.
func tuneGC() {
	tuneOnce.Do(func() {
		if os.Getenv("GOGC") != "" {
			return
		}
		limit := os.Getenv("GOMEMLIMIT") == "" // one set by hand wins
		samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}}
		set := -1 // the GOGC this tuner set last
		var arm func()
		arm = func() {
			// Not a tiny allocation: those share a block, and their
			// finalizers may never run.
			sentinel := new(gcSentinel)
			runtime.SetFinalizer(sentinel, func(*gcSentinel) {
				metrics.Read(samples)
				live := samples[0].Value.Uint64()
				current := int(samples[1].Value.Uint64())
				if set == -1 || current == set {
					pct := 100
					if live > 0 && gcHeadroom*100/live > 100 {
						pct = int(min(gcHeadroom*100/live, 10000))
					}
					if pct != current {
						debug.SetGCPercent(pct)
					}
					set = pct
					if limit {
						debug.SetMemoryLimit(int64(live) + bulkHeadroom)
					}
				}
				arm()
			})
		}
		arm()
	})
}

// gcHeld keeps two loads from restoring each other's settings.
var gcHeld sync.Mutex

// holdGC runs load, the unlock's load of the view (custodian.Config.LoadGC),
// with the collector held off unless the heap grows by more than
// loadHeadroom: collecting while the view grows mostly traces what is being
// built (it took the unlock of 100,000 claims from 3.1 s to 1.55 s together
// with the load's decoder, docs/benchmarks/history.md). The core collects
// afterwards. While it holds GOGC off, tuneGC leaves GOGC alone.
func holdGC(load func() error) error {
	const loadHeadroom = 1 << 30
	gcHeld.Lock()
	defer gcHeld.Unlock()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	prevLimit := debug.SetMemoryLimit(-1)
	prevPct := debug.SetGCPercent(-1)
	target := int64(stats.HeapSys+stats.StackSys) + loadHeadroom
	if os.Getenv("GOMEMLIMIT") != "" {
		target = min(prevLimit, target) // the limit set by hand still holds
	}
	// Otherwise the limit is tuneGC's, the live heap before the load plus
	// bulkHeadroom: the load's view may grow past it. tuneGC moves it to
	// the new live heap at the next collection.
	debug.SetMemoryLimit(target)
	defer func() {
		debug.SetGCPercent(prevPct)
		debug.SetMemoryLimit(prevLimit)
	}()
	return load()
}
