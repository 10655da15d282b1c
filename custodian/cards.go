package custodian

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

// CardCodec makes and reads custodian cards (docs/formats/bundle.md §1) and seals and
// opens migration bundles (§3); internal/bundle implements it with jwx. The core never looks inside a
// key: it keeps the vault's private key set as an opaque secret.
type CardCodec interface {
	// NewKeys returns a new signing and key-agreement key pair, private
	// parts included, as one opaque blob to keep secret.
	NewKeys() ([]byte, error)
	// Card returns the public card of keys, made at created.
	Card(keys []byte, created time.Time) (Card, error)
	// ParseCard checks a card from elsewhere (public keys only, its id
	// the signing key's) and returns it re-encoded.
	ParseCard(raw []byte) (Card, error)
	// Seal signs payload with keys' signing key and encrypts it to the
	// key-agreement key of the card to (a migration bundle).
	Seal(keys []byte, to Card, payload []byte) ([]byte, error)
	// Open decrypts a bundle with keys' key-agreement key and verifies it
	// with the card signer returns for the custodian it names; it returns
	// that custodian's id and the payload.
	Open(keys []byte, bundle []byte, signer func(custodianID string) (Card, bool)) (source string, payload []byte, err error)
}

const (
	bucketKeys       = "custodian_keys" // "self" → vaultKeys
	bucketCustodians = "custodians"     // pin_… (random: whom the owner trusts is not in the clear) → PinnedCustodian
	keysSelf         = "self"
)

// pinnedEntry is a pinned custodian with the store key it is kept under.
type pinnedEntry struct {
	PinnedCustodian
	key string
}

// vaultKeys is the vault's own long-term key set, secret, stored encrypted
// like every value, made at the first unlock that finds none.
type vaultKeys struct {
	Keys      json.RawMessage `json:"keys"`
	CreatedAt time.Time       `json:"created_at"`
}

// ensureKeys makes the vault's keys in the unlock's commit when it has
// none (a new vault, or one made before cards existed).
func (s *Service) ensureKeys(st *state, b *batch) error {
	if st.keys != nil || s.cards == nil {
		return nil
	}
	raw, err := s.cards.NewKeys()
	if err != nil {
		return model.Wrap("unlock", KindInternal, err)
	}
	k := &vaultKeys{Keys: raw, CreatedAt: b.Now.UTC().Truncate(time.Second)}
	c, err := s.cards.Card(k.Keys, k.CreatedAt)
	if err != nil {
		return model.Wrap("unlock", KindInternal, err)
	}
	st.keys = k
	b.Put(bucketKeys, keysSelf, k)
	b.Receipt(Receipt{Actor: "owner", Operation: "custodian.keys", Decision: "allow", Records: []string{c.CustodianID}})
	return nil
}

// OwnCard returns this custodian's public card (owner only).
func (s *Service) OwnCard(ctx context.Context, p Principal) (Card, error) {
	return ownerRead(s, "card", p, func(st *state) (Card, error) {
		return s.card(st, "card")
	})
}

func (s *Service) card(st *state, op string) (Card, error) {
	if s.cards == nil {
		return Card{}, model.Fail(op, KindInvalid, "this custodian has no card (it was built without one)")
	}
	if st.keys == nil {
		return Card{}, model.Fail(op, KindInternal, "this custodian's keys are missing")
	}
	c, err := s.cards.Card(st.keys.Keys, st.keys.CreatedAt)
	if err != nil {
		return Card{}, model.Wrap(op, KindInternal, err)
	}
	return c, nil
}

// CardInput is the input of a pin: another custodian's card as it
// published it (the body of POST /phc/v1/custodians). It is bytes, not a
// typed envelope nor an [Input] for [Service.Decode], on purpose: a card is
// a document signed by its custodian, which the card codec reads and
// checks as it came (strict members, the signature over its bytes).
type CardInput struct {
	Card []byte
}

// PinCustodian pins another custodian's card (owner only). A card that is
// not one, this custodian's own, or an id pinned already is refused.
func (s *Service) PinCustodian(ctx context.Context, p Principal, in CardInput) (PinnedCustodian, error) {
	const op = "custodian.pin"
	if err := p.RequireOwner(op); err != nil {
		return PinnedCustodian{}, err
	}
	if s.cards == nil {
		return PinnedCustodian{}, model.Fail(op, KindInvalid, "this custodian cannot read cards")
	}
	c, err := s.cards.ParseCard(in.Card)
	if err != nil {
		return PinnedCustodian{}, model.Fail(op, KindInvalid, err.Error())
	}
	var out PinnedCustodian
	err = s.write(op, p, func(st *state, b *batch) error {
		if own, err := s.card(st, op); err == nil && own.CustodianID == c.CustodianID {
			return model.Fail(op, KindInvalid, "this is this custodian's own card")
		}
		if _, ok := st.custodians[c.CustodianID]; ok {
			return model.Fail(op, KindConflict, "this custodian is pinned already: remove it first to pin another card")
		}
		key, err := identity.NewID("pin_")
		if err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		pc := &pinnedEntry{PinnedCustodian: PinnedCustodian{Card: c, PinnedAt: b.Now, Revision: b.NextRevision()}, key: key}
		st.custodians[c.CustodianID] = pc
		b.Put(bucketCustodians, key, &pc.PinnedCustodian)
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{c.CustodianID}, Revision: pc.Revision})
		out = pc.PinnedCustodian
		return nil
	})
	return out, err
}

// ListCustodians returns the pinned custodians, oldest first (owner only).
func (s *Service) ListCustodians(ctx context.Context, p Principal) ([]PinnedCustodian, error) {
	return ownerRead(s, "custodian.list", p, func(st *state) ([]PinnedCustodian, error) {
		out := make([]PinnedCustodian, 0, len(st.custodians))
		for _, c := range st.custodians {
			out = append(out, c.PinnedCustodian)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
		return out, nil
	})
}

// UnpinCustodian removes a pinned custodian (owner only): its bundles are
// refused from the returned revision on.
func (s *Service) UnpinCustodian(ctx context.Context, p Principal, id string) (uint64, error) {
	const op = "custodian.unpin"
	if err := p.RequireOwner(op); err != nil {
		return 0, err
	}
	if !strings.HasPrefix(id, "cus_") || len(id) > 64 {
		return 0, model.Fail(op, KindInvalid, "malformed custodian id")
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		pc, ok := st.custodians[id]
		if !ok {
			return model.NotFound(op)
		}
		delete(st.custodians, id)
		b.Del(bucketCustodians, pc.key)
		rev = b.NextRevision()
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{id}, Revision: rev})
		return nil
	})
	return rev, err
}
