package daemontest

import (
	"bytes"
	"testing"
)

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// The serving line closes Serving even when it comes in pieces, and
// everything written is passed on; a line that merely resembles it does not.
func TestServingLog(t *testing.T) {
	var out bytes.Buffer
	l := NewServingLog(&out)
	writes := []string{"time=1 level=INFO msg=\"phc starting\"\n", "time=2 level=INFO msg=\"phc ser", "ving\" addr=127.0.0.1:7200\n", "after\n"}
	for i, w := range writes {
		if _, err := l.Write([]byte(w)); err != nil {
			t.Fatal(err)
		}
		if got, want := isClosed(l.Serving), i >= 2; got != want {
			t.Fatalf("after write %d: serving closed = %v, want %v", i, got, want)
		}
	}
	if want := "time=1 level=INFO msg=\"phc starting\"\ntime=2 level=INFO msg=\"phc serving\" addr=127.0.0.1:7200\nafter\n"; out.String() != want {
		t.Errorf("passed on %q, want %q", out.String(), want)
	}
	l2 := NewServingLog(&out)
	l2.Write([]byte("msg=\"phc serving soon\"\n"))
	if isClosed(l2.Serving) {
		t.Error("a line that is not the serving line closed Serving")
	}
}
