package store

import (
	"strings"
	"testing"
)

// TestOpSize checks that opSize, which sizes an Update's record before it
// is encoded, is the length appendOp writes, across uvarint widths.
func TestOpSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    walOp
	}{
		{"delete", walOp{op: opDelete, bucket: "b", key: "k"}},
		{"put", walOp{op: opPut, bucket: "claims", key: "clm_X@00000001", value: []byte("sealed")}},
		{"append empty value", walOp{op: opAppend, bucket: "receipts", key: "0000000000000001", value: []byte{}}},
		{"two-byte lengths", walOp{op: opPut, bucket: strings.Repeat("b", 200), key: strings.Repeat("k", 300), value: make([]byte, 16383)}},
		{"three-byte length", walOp{op: opPut, bucket: "b", key: "k", value: make([]byte, 16384)}},
		{"large value", walOp{op: opAppend, bucket: "b", key: "k", value: make([]byte, 3<<20)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := opSize(tc.o), len(appendOp(nil, tc.o)); got != want {
				t.Errorf("opSize = %d, appendOp wrote %d bytes", got, want)
			}
		})
	}
}
