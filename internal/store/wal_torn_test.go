package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/store"
)

// Torn last frame at every cut, in a reused segment holding stale frames.
func TestBoltReviewTornEveryCut(t *testing.T) {
	tune := store.Tuning{FlushDelay: time.Hour, SegmentSize: 2048}
	for cut := 1; cut < 16+40; cut += 3 {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "phc.db")
			s := mustReopenBolt(t, path, newTestCipher(t), tune)
			m := map[string]string{}
			for i := range 200 { // many rotations; spares reused
				k := fmt.Sprint("k", i%37)
				v := fmt.Sprint("v", i)
				m[k] = v
				put(t, s, "b", k, v)
				if i%5 == 4 {
					s.Flush()
				}
			}
			s.Crash()
			segs, _ := filepath.Glob(filepath.Join(s.LogDir(), "*.seg"))
			slices.Sort(segs)
			seg := segs[len(segs)-1]
			data, _ := os.ReadFile(seg)
			first := segFirst(t, seg)
			var last uint64
			store.ReadSegment(data, first, func(seq uint64, _ byte, _, _ string, _ []byte) { last = seq })
			if last == 0 {
				last = first - 1
			}
			end := logEnd(t, data, first)
			full := store.Frame(last+1, "b", "torn", []byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxx"))
			fr := full[:min(cut, len(full)-1)]
			// The first byte the tear left out must differ from what the
			// segment held there: were it the same (one chance in 256 with
			// a stale byte), the frame would be whole, not torn — and this
			// test's frame, unsealed, then fails to decrypt.
			if int(end)+len(fr) < len(data) && data[int(end)+len(fr)] == full[len(fr)] {
				fr = append(fr, ^full[len(fr)])
			}
			f, _ := os.OpenFile(seg, os.O_WRONLY, 0)
			f.WriteAt(fr, int64(end))
			f.Close()
			s = mustReopenBolt(t, path, newTestCipher(t), tune)
			for k, v := range m {
				if got := get(t, s, "b", k); got != v {
					t.Fatalf("%s = %s, want %s", k, got, v)
				}
			}
			if get(t, s, "b", "torn") != "<missing>" {
				t.Fatal("torn record applied")
			}
		})
	}
}
