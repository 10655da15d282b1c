package custodian

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/valueref"
)

// referenceMode reports whether claim c, served to p under g (nil: the
// owner's auto_grant), goes as a reference: the grant's disclosure, else
// the owner's setting for the claim's tier, says so, or p asked for one.
func (st *state) referenceMode(p Principal, g *Grant, c *Claim) bool {
	if p.Disclosure() == DisclosureReference {
		return true
	}
	mode := st.Settings.DisclosureFor(c.Sensitivity)
	if g != nil && g.Disclosure != "" {
		mode = g.Disclosure
	}
	return mode == DisclosureReference
}

// The references minted for each reader: one record per reader, under an
// opaque key (a digest of the reader's name), encrypted like every record.
const bucketVaultRefs = "vault_refs" // sha256(reader) hex → readerRefs

// mintedRef is one reference key of one reader: the claim and version
// whose value it names, the grant and purpose it was served under, and
// when the key was (last) minted.
type mintedRef struct {
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
	Reader string                `json:"reader"`
	Next   map[string]int        `json:"next"` // TYPE → the last N minted
	Refs   map[string]*mintedRef `json:"refs"` // TYPE_N → ref

	byClaim map[string]*mintedRef // claim id → its ref (derived at load)
}

func (rr *readerRefs) index() {
	rr.byClaim = make(map[string]*mintedRef, len(rr.Refs))
	for _, m := range rr.Refs {
		rr.byClaim[m.Claim] = m
	}
}

// clone is a copy of rr whose maps a write may change.
func (rr *readerRefs) clone() *readerRefs {
	out := &readerRefs{Reader: rr.Reader, Next: make(map[string]int, len(rr.Next)+1), Refs: make(map[string]*mintedRef, len(rr.Refs)+1)}
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

// refWant is one claim a read serves as a reference: the version it read
// and what it was served under.
type refWant struct {
	claim   string
	version int
	grant   string
	purpose string
}

// sameValue reports whether versions a and b of r hold the same value.
func sameValue(r *claimRecord, a, b int) bool {
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
func (m *mintedRef) current(r *claimRecord, w refWant, since time.Time) bool {
	return m != nil && !m.MintedAt.Before(since) && sameValue(r, m.Version, w.version) && m.Grant == w.grant && m.Purpose == w.purpose
}

// references returns, for each claim of wants, the reference text that
// stands for its value for reader: the key minted before while the value
// is the same, else a key minted now (a new one for a claim never served,
// the same key minted again for a value that changed). What it mints is
// durable before it returns.
func (s *Service) references(st *state, reader string, wants []refWant) (map[string]string, error) {
	texts := func(st *state) (map[string]string, bool) {
		rr := st.cv.refs[reader]
		since := st.consumerSince(reader)
		out := make(map[string]string, len(wants))
		for _, w := range wants {
			r := st.Claims[w.claim]
			if rr == nil || r == nil || !rr.byClaim[w.claim].current(r, w, since) {
				return nil, false
			}
			m := rr.byClaim[w.claim]
			out[w.claim] = valueref.Text(m.Key, r.Meta.Key, r.Version(w.version).Value)
		}
		return out, true
	}
	var out map[string]string
	var ok bool
	if err := st.ReadLocked(func() { out, ok = texts(st) }); err != nil {
		return nil, err // texts read a claim from the store
	}
	if ok {
		return out, nil
	}
	err := s.commit(st, func(st *state, b *batch) error {
		old := st.cv.refs[reader]
		rr := &readerRefs{Reader: reader, Next: map[string]int{}, Refs: map[string]*mintedRef{}, byClaim: map[string]*mintedRef{}}
		if old != nil {
			rr = old.clone()
		}
		changed := false
		since := st.consumerSince(reader)
		for _, w := range wants {
			r := st.Claims[w.claim]
			if r == nil || w.version < 1 || w.version > r.Meta.Head {
				continue // gone meanwhile: the read still shows its key
			}
			m := rr.byClaim[w.claim]
			if m.current(r, w, since) {
				continue
			}
			nm := &mintedRef{Claim: w.claim, Version: w.version, Grant: w.grant, Purpose: w.purpose, MintedAt: b.Now}
			switch {
			case m == nil:
				typ := valueref.Type(r.Head().Key)
				rr.Next[typ]++
				nm.Key = typ + "_" + strconv.Itoa(rr.Next[typ])
			case !m.MintedAt.Before(since) && sameValue(r, m.Version, w.version):
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
			rr.byClaim[w.claim] = nm
			changed = true
		}
		if changed {
			st.cv.refs[reader] = rr
			b.Put(bucketVaultRefs, readerRefsKey(reader), rr)
		}
		out, ok = texts(st)
		return nil
	})
	if err == nil && !ok {
		// A claim the read served was erased before its key could be
		// minted: no reference stands for it, and no value may go out.
		return nil, model.Fail("reference", KindConflict, "the data changed while it was read: read it again")
	}
	return out, err
}

// loadVaultRefs reads every reader's references into st.cv.
func (st *state) loadVaultRefs(tx Tx) error {
	return tx.ForEach(bucketVaultRefs, func(k string, v []byte) error {
		rr := &readerRefs{}
		if err := json.Unmarshal(v, rr); err != nil {
			return fmt.Errorf("vault refs %s: %w", k, err)
		}
		if rr.Next == nil {
			rr.Next = map[string]int{}
		}
		if rr.Refs == nil {
			rr.Refs = map[string]*mintedRef{}
		}
		rr.index()
		st.cv.refs[rr.Reader] = rr
		return nil
	})
}

// asReference returns c with its value replaced by the reference text.
func asReference(c Claim, text string) Claim {
	v, _ := json.Marshal(text)
	c.Value = v
	return c
}
