package engine

import (
	"strconv"
	"time"

	"github.com/phc-project/phc/custodian/internal/limits"
	"github.com/phc-project/phc/custodian/internal/model"
)

// Refuse stages the receipt of a refusal that anyone may cause, coalesced
// per key (the caller, the operation and the constraint; see
// limits.Coalescer): own, when it is the first of its key in a window;
// otherwise it is only counted, and the count is written as one receipt of
// of, with the records "count:N" and "window:START/END" after of's, once
// the window has closed (at the next refusal of any key, or a lock).
func (b *Batch) Refuse(key string, own, of model.Receipt) {
	first, closed := b.St.Refusals.Note(key, b.Now, of)
	b.countReceipts(closed)
	if first {
		b.Receipt(own)
	}
}

// FlushRefusals stages a count receipt for every window of refusals with
// refusals counted in it, open or not (before a lock).
func (b *Batch) FlushRefusals() { b.countReceipts(b.St.Refusals.Flush(b.Now)) }

func (b *Batch) countReceipts(ws []limits.Window[model.Receipt]) {
	for _, w := range ws {
		rc := w.Of
		rc.Records = append(append([]string(nil), rc.Records...), "count:"+strconv.Itoa(w.Count),
			"window:"+w.Start.UTC().Format(time.RFC3339)+"/"+w.End.UTC().Format(time.RFC3339))
		b.Receipt(rc)
	}
}
