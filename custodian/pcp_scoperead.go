package custodian

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/model"
)

// ReadScope is consumer p's read, for purpose, of the fields scope's key
// patterns cover (a field covers the keys below it): of each, exactly what
// a context read (FieldContext) would give, decided and receipted as that
// read is, and only the fields returned are disclosed and receipted. A
// field p may not read is left out exactly as one that does not exist.
// A token that may not read for purpose — its mode does not read, or it is
// bound to another purpose — reads nothing, and NotRead says why; what
// the answer says depends on the token and the patterns alone, never on
// what exists.
func (s *Service) ReadScope(ctx context.Context, p Principal, scope []string, purpose string) (ScopeRead, error) {
	const op = "field.context"
	switch {
	case p.Kind() == PrincipalSealed:
		return ScopeRead{}, model.Fail(op, KindLocked, "")
	case p.Kind() != PrincipalConsumer || p.Token() == nil:
		return ScopeRead{}, model.Fail(op, KindInvalid, "a scope is read by a registered consumer, with its service token")
	case len(scope) == 0:
		return ScopeRead{}, model.Fail(op, KindInvalid, "scope is required")
	case !validPurpose(purpose):
		return ScopeRead{}, model.Fail(op, KindInvalid, model.ErrPurpose)
	}
	for _, pat := range scope {
		if !validPattern(pat) {
			return ScopeRead{}, model.Fail(op, KindInvalid, "scope holds a malformed key pattern")
		}
	}
	out := ScopeRead{Fields: []Field{}, TokenPurpose: p.Token().Purpose}
	for _, pat := range scope {
		if !scopeCovers(p.Token().Scope, pat) {
			out.Unreached = append(out.Unreached, pat)
		}
	}
	switch {
	case !p.Token().CanRead():
		out.NotRead = NotReadMode
		return out, nil
	case p.Token().Purpose != "" && p.Token().Purpose != purpose:
		out.NotRead = NotReadPurpose
		return out, nil
	}
	pick := func(rs []*claimRecord, _ func(*claimRecord) bool) []*claimRecord {
		kept := rs[:0:0]
		for _, r := range rs {
			if matchAny(scope, r.Meta.Key) {
				kept = append(kept, r)
			}
		}
		return kept
	}
	var err error
	out.Fields, out.Warnings, out.Revision, err = s.consumerFieldsWhere(op, p, purpose, "*", true, pick)
	if err != nil {
		return ScopeRead{}, err
	}
	return out, nil
}

// scopeCovers reports whether the scope patterns of a token cover every key
// pattern pat covers (a field covers itself and the keys below it).
func scopeCovers(token []string, pat string) bool {
	base, below := strings.CutSuffix(pat, ".*") // below: only the keys under base
	for _, t := range token {
		tb, tBelow := strings.CutSuffix(t, ".*")
		switch {
		case t == "*":
			return true
		case pat == "*":
		case tBelow:
			// Every key strictly below tb.
			if underKey(tb, base) && (below || base != tb) {
				return true
			}
		default:
			// A field: itself and every key below it.
			if underKey(tb, base) {
				return true
			}
		}
	}
	return false
}

// RequestDurationBounds says whether raw, a request's duration (whole
// seconds, or text such as "1h" or "30 minutes"), reads as a duration
// (ok), and whether it is under a minute (short) or over 30 days (long),
// which POST /context/requests refuses — as parseTTL reads it.
func RequestDurationBounds(raw json.RawMessage) (ok, short, long bool) {
	var d time.Duration
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		v, parsed := parseDuration(s)
		if !parsed {
			return false, false, false
		}
		d = v
	} else {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return false, false, false
		}
		if n < int64(model.MinTokenTTL/time.Second) {
			return true, true, false
		}
		d = time.Duration(min(n, int64(model.TTLCeiling/time.Second))) * time.Second
	}
	return true, d < model.MinTokenTTL, d > model.MaxTokenTTL
}
