package vault

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestHardenProcess(t *testing.T) {
	HardenProcess()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_CORE, &lim); err != nil {
		t.Fatalf("Getrlimit: %v", err)
	}
	if lim.Cur != 0 {
		t.Errorf("RLIMIT_CORE = %d after HardenProcess; want 0", lim.Cur)
	}
	dumpable, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		t.Fatalf("prctl(PR_GET_DUMPABLE): %v", err)
	}
	if dumpable != 0 {
		t.Errorf("PR_GET_DUMPABLE = %d after HardenProcess; want 0", dumpable)
	}
}
