package custodian

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/phc-project/phc/custodian/internal/model"
)

// ReadableNow tells the owner what recipient (a consumer's name, or an
// OIDC recipient's as its grants name it) may read right now: for each
// purpose of its read grants in force, the claims a context read for that
// purpose would serve, as the recipient would receive them. It runs the
// read path itself (the one [Service.Context] serves) with a token of the
// widest scope and read mode, so a token the app holds can narrow the list
// but never widen it. A consumer that is not approved reads nothing. It
// discloses nothing to anyone, so it writes no receipt. Owner only.
func (s *Service) ReadableNow(ctx context.Context, p Principal, recipient string) (Readable, error) {
	const op = "readable"
	if recipient == "" || len(recipient) > 512 {
		return Readable{}, model.Fail(op, KindInvalid, "name a recipient")
	}
	return ownerRead(s, op, p, func(st *state) (Readable, error) {
		now := s.eng.Clock.Now()
		out := Readable{Recipient: recipient, Purposes: []ReadablePurpose{}, Revision: st.Revision}
		if c, ok := st.Consumers[recipient]; ok && c.Status != ConsumerApproved {
			return out, nil
		}
		reader := widestReader(recipient)
		grants := st.grantsFor(recipient, OpRead, now)
		purposes := map[string]bool{}
		for _, g := range grants {
			purposes[g.Purpose] = true
		}
		names := make([]string, 0, len(purposes))
		for pu := range purposes {
			names = append(names, pu)
		}
		sort.Strings(names)
		for _, pu := range names {
			sv, used, err := st.servable(reader, grants, pu, "", now)
			if err != nil {
				return Readable{}, model.Wrap(op, KindInternal, err)
			}
			rp := ReadablePurpose{Purpose: pu, Claims: make([]Claim, 0, len(sv)), Grants: make([]string, 0, len(used))}
			for _, it := range sv {
				rp.Claims = append(rp.Claims, it.sc.Claim)
			}
			for _, g := range used {
				rp.Grants = append(rp.Grants, g.ID)
			}
			out.Purposes = append(out.Purposes, rp)
		}
		return out, nil
	})
}

// widestReader is app name reading with a token of the widest scope and
// read mode: what it may read with any token it may mint.
func widestReader(name string) Principal {
	return model.ConsumerPrincipal(name, &ServiceToken{Consumer: name, Scope: []string{"*"}, Mode: ModeRead}, "")
}

// readersOf counts, for each approved app that may read some of claims at
// now — by a read grant in force for one of its purposes, or by the
// owner's auto_grant — how many of them it reads. Callers hold st.Mu.
func (st *state) readersOf(claims []*claimRecord, now time.Time) map[string]int {
	out := map[string]int{}
	for name, c := range st.Consumers {
		if c.Status != ConsumerApproved {
			continue
		}
		reader := widestReader(name)
		grants := st.grantsFor(name, OpRead, now)
		purposes := []string{""} // the auto_grant
		for _, g := range grants {
			if !slices.Contains(purposes, g.Purpose) {
				purposes = append(purposes, g.Purpose)
			}
		}
		for _, r := range claims {
			if slices.ContainsFunc(purposes, func(pu string) bool { _, ok := st.fieldGrant(reader, r, pu, now, grants); return ok }) {
				out[name]++
			}
		}
	}
	return out
}

// SessionOpen reports whether p is an owner session that is still open:
// false once the vault has locked (which ends every session), or for any
// other principal.
func (s *Service) SessionOpen(p Principal) bool {
	if p.Kind() != PrincipalOwner {
		return false
	}
	s.life.RLock()
	defer s.life.RUnlock()
	if s.st == nil {
		return false
	}
	_, ok := s.sessions[p.Session()]
	return ok
}
