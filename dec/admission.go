package dec

import (
	"fmt"
	"regexp"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/phc-project/phc/dec/dectype"
	"github.com/phc-project/phc/schema"
)

var policyIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ParsePolicy reads a policy strictly (unknown or duplicate members,
// trailing data and malformed values are refused) and checks it as
// [Service.CheckPolicy] does.
func ParsePolicy(raw []byte) (dectype.Policy, error) {
	var p dectype.Policy
	if err := schema.DecodeInto(raw, schema.Limits{MaxBytes: dectype.MaxPolicyBytes}, &p); err != nil {
		return dectype.Policy{}, fmt.Errorf("policy: %w", err)
	}
	if err := checkPolicy(p); err != nil {
		return dectype.Policy{}, err
	}
	return p, nil
}

// checkPolicy checks a policy's values: what the format allows in each
// member. Its strings must be UTF-8, as a decoded policy's are.
func checkPolicy(p dectype.Policy) error {
	switch {
	case !policyIDPattern.MatchString(p.ID):
		return fmt.Errorf("policy: id must be a lower-case word of at most 64 bytes")
	case !idPattern.MatchString(p.Issuer):
		return fmt.Errorf("policy: issuer is required")
	case !idPattern.MatchString(p.ClientID):
		return fmt.Errorf("policy: client_id is required")
	case p.Method != "" && !isText(p.Method), p.Purpose != "" && !isText(p.Purpose):
		return fmt.Errorf("policy: method and purpose are text of at most 256 bytes")
	}
	for _, d := range append(append([]string{}, p.ReleaseDigests...), p.RuntimeConfigDigests...) {
		if !digestPattern.MatchString(d) {
			return fmt.Errorf("policy: a digest is not sha256:<64 hex>")
		}
	}
	if p.MaxAge != "" {
		if d, err := p.MaxAge.Duration(); err != nil || d <= 0 {
			return fmt.Errorf(`policy: max_age must be a positive duration: "720h", "30d", "90m", or a number of seconds (2592000)`)
		}
	}
	return nil
}

// isText reports whether s is text of the format: UTF-8, 1 to 256 bytes,
// no control characters.
func isText(s string) bool { return utf8.ValidString(s) && textPattern.MatchString(s) }

// maxClockSkew is how far in the future a chain's last entry may be dated.
const maxClockSkew = 5 * time.Minute

// Admit evaluates a verified report against policy and the trust store as
// of now. It is an extra condition on top of consent, never a substitute:
// admission grants nothing by itself. Release, method, purpose and runtime
// are those of the chain's release and qualification entries (see
// [dectype.Report]); a chain without one — evidence about runs only — is
// denied.
func Admit(rep dectype.Report, p dectype.Policy, trust Trust, now time.Time) dectype.Admission {
	a := dectype.Admission{Policy: p.ID, Head: rep.Head, Failed: []dectype.Condition{}}
	fail := func(code, format string, args ...any) {
		a.Failed = append(a.Failed, dectype.Condition{Code: code, Detail: fmt.Sprintf(format, args...)})
	}
	if !rep.OK {
		fail(dectype.CondVerified, "the chain does not pass all three verdicts")
	}
	if rep.QualifiedAt == "" {
		fail(dectype.CondQualification, "the chain has no release or qualification entry: evidence about a run is not a qualification")
	}
	if rep.Issuer != p.Issuer {
		fail(dectype.CondIssuer, "the chain's issuer is not the policy's")
	}
	if rep.Subject == nil || rep.Subject.ClientID != p.ClientID {
		fail(dectype.CondClientID, "the chain is about another client")
	}
	if len(p.ReleaseDigests) > 0 && (rep.Release == nil || !slices.Contains(p.ReleaseDigests, rep.Release.Digest)) {
		fail(dectype.CondReleaseDigest, "the chain's release digest is not one the policy admits")
	}
	if p.Method != "" && rep.Method != p.Method {
		fail(dectype.CondMethod, "the chain's method is not the policy's")
	}
	if p.Purpose != "" && rep.Purpose != p.Purpose {
		fail(dectype.CondPurpose, "the chain's purpose is not the policy's")
	}
	if len(p.RuntimeConfigDigests) > 0 && (rep.Runtime == nil || !slices.Contains(p.RuntimeConfigDigests, rep.Runtime.ConfigDigest)) {
		fail(dectype.CondRuntimeDigest, "the chain's runtime configuration is not one the policy admits")
	}
	if p.MaxAge != "" {
		maxAge, _ := p.MaxAge.Duration()
		last, err := time.Parse(time.RFC3339, rep.LastIat)
		switch {
		case err != nil || now.Sub(last) > maxAge:
			fail(dectype.CondMaxAge, "the chain's last entry is older than %s", p.MaxAge)
		case last.Sub(now) > maxClockSkew:
			fail(dectype.CondMaxAge, "the chain's last entry is dated in the future")
		}
	}
	if p.RequireUnrevoked {
		for _, kid := range rep.KeysUsed {
			if at, ok := trust.revokedAt(rep.Issuer, kid); ok && !now.Before(at) {
				fail(dectype.CondRevoked, "a key that signed the chain is revoked")
				break
			}
		}
	}
	a.Decision = dectype.DecisionAdmit
	if len(a.Failed) > 0 {
		a.Decision = dectype.DecisionDeny
	}
	return a
}
