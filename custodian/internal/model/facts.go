package model

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/phc-project/phc/internal/identity"
)

// The facts of the claim model that the core and the packages beside it
// share: what a valid key is, how tiers order, which restrictions exist and
// how a version's restrictions carry over.

// ValidKey reports whether k is a dot-notation key of 1–16 segments, each
// [a-z0-9][a-z0-9_-]{0,63}, at most 256 bytes in all.
func ValidKey(k string) bool {
	if k == "" || len(k) > 256 {
		return false
	}
	segs := strings.Split(k, ".")
	if len(segs) > 16 {
		return false
	}
	for _, s := range segs {
		if !ValidSegment(s) {
			return false
		}
	}
	return true
}

var TierRank = map[string]int{SensitivityPublic: 0, SensitivityStandard: 1, SensitivitySensitive: 2, SensitivityCritical: 3}

// RaiseTier returns the stricter of two tiers.
func RaiseTier(a, b string) string {
	if TierRank[b] > TierRank[a] {
		return b
	}
	return a
}

func KnownRestriction(t string) bool {
	switch t {
	case RestrictNoExport, RestrictPurposeOnly, RestrictExpires, RestrictSourceControlled,
		RestrictThirdParty, RestrictNoTraining, RestrictLocalProcessingOnly:
		return true
	}
	return false
}

// MergeRestrictions is what a new version carries: every restriction of
// the one it replaces (prev), then each of add that prev lacks. Nothing is
// dropped: only the owner's explicit removal takes a restriction away.
func MergeRestrictions(prev, add []Restriction) []Restriction {
	out := append(make([]Restriction, 0, len(prev)+len(add)), prev...)
	for _, r := range add {
		if !slices.ContainsFunc(out, func(o Restriction) bool { return sameRestriction(o, r) }) {
			out = append(out, r)
		}
	}
	return out
}

// sameRestriction reports whether a and b are the same restriction (type,
// force, holder and parameters).
func sameRestriction(a, b Restriction) bool {
	if a.Type != b.Type || a.Mandatory != b.Mandatory || a.Holder != b.Holder || len(a.Params) != len(b.Params) {
		return false
	}
	pa, _ := json.Marshal(a.Params)
	pb, _ := json.Marshal(b.Params)
	return bytes.Equal(pa, pb)
}

// ParseRef splits "id@version".
func ParseRef(ref string) (id string, v int, ok bool) {
	id, vs, found := strings.Cut(ref, "@")
	if !found || len(vs) == 0 || len(vs) > 9 || vs[0] == '0' || strings.Trim(vs, "0123456789") != "" {
		return "", 0, false
	}
	v, err := strconv.Atoi(vs)
	if err != nil || v < 1 {
		return "", 0, false
	}
	if !identity.ValidID(id, "clm_") && !identity.ValidID(id, "sum_") {
		return "", 0, false
	}
	return id, v, true
}

// OrEmpty is s, or an empty slice for nil (which encodes as null).
func OrEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// OwnerAuth is the owner as the authenticated producer of what it writes.
var OwnerAuth = Authenticated{Kind: "owner", ID: "owner"}

// DenyReceipt is the receipt of a refused request of p.
func DenyReceipt(p Principal, operation string, err *Error) Receipt {
	return Receipt{Actor: p.Actor(), Operation: operation, Recipient: p.Consumer,
		Decision: "deny", Constraint: err.Kind.Row().Constraint}
}
