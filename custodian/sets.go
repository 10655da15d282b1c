package custodian

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Disclosed sets. A receipt that names more than setMin refs (a context
// read names every field it disclosed) records the digest of its refs
// instead of the refs; each distinct set is stored once, under its digest,
// in bucketSets. A read repeated over unchanged data so costs the store one
// small receipt, and a read of a new set the set's refs, once.
const (
	bucketSets = "disclosed_sets" // hex digest → JSON array of refs
	setMin     = 8
	// setCacheSize bounds the digests the journal remembers as stored, so
	// that a repeated set is not looked up in the store every time.
	setCacheSize = 4096
)

// setDigest is "sha256:" and the hex SHA-256 of refs, each followed by a
// newline. A ref never holds a newline (receipts are sanitized and refs are
// ids), so distinct lists have distinct inputs.
func setDigest(refs []string) string {
	h := sha256.New()
	for _, r := range refs {
		h.Write([]byte(r))
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// setKey is the store key of the set with digest d.
func setKey(d string) string { return strings.TrimPrefix(d, "sha256:") }

// knownSets remembers digests of sets known to be stored.
type knownSets struct{ c *lru.Cache[string, struct{}] }

func newKnownSets() *knownSets {
	c, err := lru.New[string, struct{}](setCacheSize)
	if err != nil {
		panic(fmt.Sprintf("custodian: set cache: %v", err))
	}
	return &knownSets{c: c}
}

// condense replaces r's records by their set when there are more than
// setMin, and returns the write that stores the set if it may be new (nil
// otherwise).
func (k *knownSets) condense(r *Receipt) *write {
	if len(r.Records) <= setMin {
		return nil
	}
	d := setDigest(r.Records)
	refs := r.Records
	r.Set, r.Count, r.Records = d, len(refs), []string{}
	if k.c.Contains(d) {
		return nil
	}
	raw, err := json.Marshal(refs)
	if err != nil {
		panic(fmt.Sprintf("custodian: encode set: %v", err))
	}
	return &write{bucket: bucketSets, key: setKey(d), value: raw, ifAbsent: true}
}

// stored records that the set with digest d is durable.
func (k *knownSets) stored(d string) { k.c.Add(d, struct{}{}) }

// loadSet reads the set with digest d and checks it against d.
func loadSet(tx Tx, d string) ([]string, error) {
	raw, ok, err := tx.Get(bucketSets, setKey(d))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("disclosed set %s missing", d)
	}
	var refs []string
	if err := json.Unmarshal(raw, &refs); err != nil {
		return nil, fmt.Errorf("disclosed set %s: %w", d, err)
	}
	if setDigest(refs) != d {
		return nil, fmt.Errorf("disclosed set %s does not match its digest", d)
	}
	return refs, nil
}
