package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/phc-project/phc/custodian/internal/model"
)

// Disclosed sets. A receipt that names more than setMin refs (a context
// read names every field it disclosed) records the digest of its refs
// instead of the refs; each distinct set is stored once a month, under the
// month and its digest (see setKey), in bucketSets. A read repeated over unchanged data so costs the store one
// small receipt, and a read of a new set the set's refs, once.
const (
	BucketSets = "disclosed_sets" // yyyymm-hex digest → JSON array of refs
	setMin     = 8
	// setCacheSize bounds the set keys the journal remembers as stored, so
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

// setKey is the store key of the set with digest d as a receipt made at
// at names it: the month, then the digest. A set is stored again in each
// month it is disclosed in, so that the sets of months whose receipts have
// all been rolled into checkpoints can be dropped with them.
func setKey(at time.Time, d string) string {
	return at.UTC().Format(SetMonth) + "-" + strings.TrimPrefix(d, "sha256:")
}

// SetMonth is the layout of a set key's month.
const SetMonth = "200601"

// knownSets remembers the keys of sets known to be stored.
type knownSets struct{ c *lru.Cache[string, struct{}] }

func newKnownSets() *knownSets {
	c, err := lru.New[string, struct{}](setCacheSize)
	if err != nil {
		panic(fmt.Sprintf("custodian: set cache: %v", err))
	}
	return &knownSets{c: c}
}

// Condense replaces r's records by their set when there are more than
// setMin, and returns the write that stores the set if it may be new (nil
// otherwise).
func (k *knownSets) Condense(r *model.Receipt) *Write {
	if len(r.Records) <= setMin {
		return nil
	}
	d := setDigest(r.Records)
	refs := r.Records
	r.Set, r.Count, r.Records = d, len(refs), []string{}
	key := setKey(r.At, d)
	if k.c.Contains(key) {
		return nil
	}
	raw, err := json.Marshal(refs)
	if err != nil {
		panic(fmt.Sprintf("custodian: encode set: %v", err))
	}
	return &Write{Bucket: BucketSets, Key: key, Value: raw, IfAbsent: true}
}

// Stored records that the set under key is durable; forget, that it is
// gone.
func (k *knownSets) Stored(key string) { k.c.Add(key, struct{}{}) }

func (k *knownSets) Forget(key string) { k.c.Remove(key) }

// LoadSet reads the set receipt r names and checks it against its digest.
func LoadSet(tx Tx, r *model.Receipt) ([]string, error) {
	d := r.Set
	raw, ok, err := tx.Get(BucketSets, setKey(r.At, d))
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
