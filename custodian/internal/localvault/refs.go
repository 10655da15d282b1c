package localvault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/valueref"
)

// The references minted for each reader: one record per reader, under an
// opaque key (a digest of the reader's name), encrypted like every record.
const bucketVaultRefs = "vault_refs" // sha256(reader) hex → readerRefs

// Ref is one reference key of one reader: the claim and version whose
// value it names, the grant and purpose it was served under, and when the
// key was (last) minted.
type Ref struct {
	Key      string    `json:"key"`
	Claim    string    `json:"claim"`
	Version  int       `json:"version"`
	Grant    string    `json:"grant,omitempty"` // "": the owner's auto_grant
	Purpose  string    `json:"purpose,omitempty"`
	MintedAt time.Time `json:"minted_at"`
}

// readerRefs is a reader's mapping. It is replaced, never changed, once
// published in the view.
type readerRefs struct {
	Reader string          `json:"reader"`
	Next   map[string]int  `json:"next"` // TYPE → the last N minted
	Refs   map[string]*Ref `json:"refs"` // TYPE_N → ref

	byClaim map[string]*Ref // claim id → its ref (derived at load)
}

func (rr *readerRefs) index() {
	rr.byClaim = make(map[string]*Ref, len(rr.Refs))
	for _, m := range rr.Refs {
		rr.byClaim[m.Claim] = m
	}
}

// clone is a copy of rr whose maps a write may change.
func (rr *readerRefs) clone() *readerRefs {
	out := &readerRefs{Reader: rr.Reader, Next: make(map[string]int, len(rr.Next)+1), Refs: make(map[string]*Ref, len(rr.Refs)+1)}
	for k, v := range rr.Next {
		out.Next[k] = v
	}
	for k, v := range rr.Refs {
		out.Refs[k] = v
	}
	out.index()
	return out
}

func readerRefsKey(reader string) string {
	h := sha256.Sum256([]byte("phc vault refs\x00" + reader))
	return hex.EncodeToString(h[:16])
}

// Want is one claim a read serves as a reference: the version it read and
// what it was served under.
type Want struct {
	Claim   string
	Version int
	Grant   string
	Purpose string
}

// sameValue reports whether versions a and b of r hold the same value.
func sameValue(r *engine.ClaimRecord, a, b int) bool {
	if a < 1 || b < 1 || a > r.Meta.Head || b > r.Meta.Head {
		return false
	}
	if a == b {
		return true
	}
	return bytes.Equal(r.Version(a).Value, r.Version(b).Value)
}

// current reports whether m names want's value under want's grant and
// purpose (so that serving it again changes nothing), and was minted for
// this reader: not before it was registered under its name (since), so
// that a removed app's namesake inherits no key.
func (m *Ref) current(r *engine.ClaimRecord, w Want, since time.Time) bool {
	return m != nil && !m.MintedAt.Before(since) && sameValue(r, m.Version, w.Version) && m.Grant == w.Grant && m.Purpose == w.Purpose
}

// References returns, for each claim of wants, the reference text that
// stands for its value for reader: the key minted before while the value
// is the same, else a key minted now (a new one for a claim never served,
// the same key minted again for a value that changed). What it mints is
// durable before it returns.
func References(core Core, v View, reader string, wants []Want) (map[string]string, error) {
	texts := func() (map[string]string, bool) {
		rr := v.CV.refs[reader]
		since := v.Rules.ConsumerSince(reader)
		out := make(map[string]string, len(wants))
		for _, w := range wants {
			r := v.Claims[w.Claim]
			if rr == nil || r == nil || !rr.byClaim[w.Claim].current(r, w, since) {
				return nil, false
			}
			m := rr.byClaim[w.Claim]
			out[w.Claim] = valueref.Text(m.Key, r.Meta.Key, r.Version(w.Version).Value)
		}
		return out, true
	}
	var out map[string]string
	var ok bool
	if err := v.ReadLocked(func() { out, ok = texts() }); err != nil {
		return nil, err // texts read a claim from the store
	}
	if ok {
		return out, nil
	}
	err := core.Commit(v.State, func(b *engine.Batch) error {
		old := v.CV.refs[reader]
		rr := &readerRefs{Reader: reader, Next: map[string]int{}, Refs: map[string]*Ref{}, byClaim: map[string]*Ref{}}
		if old != nil {
			rr = old.clone()
		}
		changed := false
		since := v.Rules.ConsumerSince(reader)
		for _, w := range wants {
			r := v.Claims[w.Claim]
			if r == nil || w.Version < 1 || w.Version > r.Meta.Head {
				continue // gone meanwhile: the read still shows its key
			}
			m := rr.byClaim[w.Claim]
			if m.current(r, w, since) {
				continue
			}
			nm := &Ref{Claim: w.Claim, Version: w.Version, Grant: w.Grant, Purpose: w.Purpose, MintedAt: b.Now}
			switch {
			case m == nil:
				typ := valueref.Type(r.Head().Key)
				rr.Next[typ]++
				nm.Key = typ + "_" + strconv.Itoa(rr.Next[typ])
			case !m.MintedAt.Before(since) && sameValue(r, m.Version, w.Version):
				// The same value under another grant or purpose: the key
				// and its minting stay.
				nm.Key, nm.Version, nm.MintedAt = m.Key, m.Version, m.MintedAt
			default:
				// Another value (or another app under the same name): the
				// key is minted again, and a vault that saw it before now
				// gets expired.
				nm.Key = m.Key
			}
			rr.Refs[nm.Key] = nm
			rr.byClaim[w.Claim] = nm
			changed = true
		}
		if changed {
			v.CV.refs[reader] = rr
			b.Put(bucketVaultRefs, readerRefsKey(reader), rr)
		}
		out, ok = texts()
		return nil
	})
	if err == nil && !ok {
		// A claim the read served was erased before its key could be
		// minted: no reference stands for it, and no value may go out.
		return nil, model.Fail("reference", model.KindConflict, "the data changed while it was read: read it again")
	}
	return out, err
}

// loadRefs reads every reader's references into cv.
func (cv *State) loadRefs(tx engine.Tx) error {
	return tx.ForEach(bucketVaultRefs, func(k string, v []byte) error {
		rr := &readerRefs{}
		if err := json.Unmarshal(v, rr); err != nil {
			return fmt.Errorf("vault refs %s: %w", k, err)
		}
		if rr.Next == nil {
			rr.Next = map[string]int{}
		}
		if rr.Refs == nil {
			rr.Refs = map[string]*Ref{}
		}
		rr.index()
		cv.refs[rr.Reader] = rr
		return nil
	})
}

// AsReference returns c with its value replaced by the reference text.
func AsReference(c model.Claim, text string) model.Claim {
	v, _ := json.Marshal(text)
	c.Value = v
	return c
}
