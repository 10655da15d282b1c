package dec

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phc-project/phc/schema"
)

// Policy is a DCER admission policy (FORMATS.md §2): what a verified chain
// must say, and how fresh it must be, for its recipient to be admitted.
// Empty lists and strings do not constrain.
type Policy struct {
	ID                   string   `json:"id"`
	Issuer               string   `json:"issuer"`
	ClientID             string   `json:"client_id"`
	ReleaseDigests       []string `json:"release_digests,omitempty"`
	Method               string   `json:"method,omitempty"`
	Purpose              string   `json:"purpose,omitempty"`
	RuntimeConfigDigests []string `json:"runtime_config_digests,omitempty"`
	MaxAge               Age      `json:"max_age,omitempty"` // the last entry may be at most this old
	RequireUnrevoked     bool     `json:"require_unrevoked,omitempty"`
}

// Age is a policy's max_age: a duration as Go writes it ("720h", "90m"),
// a number of days ("30d"), or, in JSON, a number of seconds (2592000,
// kept as "2592000s").
type Age string

// UnmarshalJSON takes a string, or a whole number of seconds.
func (a *Age) UnmarshalJSON(raw []byte) error {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		*a = Age(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("max_age: want a duration such as \"720h\" or a number of seconds")
	}
	secs, err := n.Int64()
	if err != nil || secs <= 0 || secs > math.MaxInt64/int64(time.Second) {
		return fmt.Errorf("max_age: want a positive whole number of seconds, or a duration such as \"720h\"")
	}
	*a = Age(strconv.FormatInt(secs, 10) + "s")
	return nil
}

// Duration is the age as a time.Duration.
func (a Age) Duration() (time.Duration, error) {
	s := string(a)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return 0, fmt.Errorf("max_age: want a number of days such as 30d")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

var policyIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ParsePolicy reads a policy strictly (unknown or duplicate members,
// trailing data and malformed values are refused).
func ParsePolicy(raw []byte) (Policy, error) {
	var p Policy
	if err := schema.DecodeInto(raw, schema.Limits{MaxBytes: 64 << 10}, &p); err != nil {
		return Policy{}, fmt.Errorf("policy: %w", err)
	}
	switch {
	case !policyIDPattern.MatchString(p.ID):
		return Policy{}, fmt.Errorf("policy: id must be a lower-case word of at most 64 bytes")
	case !idPattern.MatchString(p.Issuer):
		return Policy{}, fmt.Errorf("policy: issuer is required")
	case !idPattern.MatchString(p.ClientID):
		return Policy{}, fmt.Errorf("policy: client_id is required")
	case p.Method != "" && !textPattern.MatchString(p.Method), p.Purpose != "" && !textPattern.MatchString(p.Purpose):
		return Policy{}, fmt.Errorf("policy: method and purpose are text of at most 256 bytes")
	}
	for _, d := range append(append([]string{}, p.ReleaseDigests...), p.RuntimeConfigDigests...) {
		if !digestPattern.MatchString(d) {
			return Policy{}, fmt.Errorf("policy: a digest is not sha256:<64 hex>")
		}
	}
	if p.MaxAge != "" {
		if d, err := p.MaxAge.Duration(); err != nil || d <= 0 {
			return Policy{}, fmt.Errorf(`policy: max_age must be a positive duration: "720h", "30d", "90m", or a number of seconds (2592000)`)
		}
	}
	return p, nil
}

// maxClockSkew is how far in the future a chain's last entry may be dated.
const maxClockSkew = 5 * time.Minute

// Condition codes of an admission's failures.
const (
	CondVerified      = "not_verified"          // a verdict failed
	CondQualification = "no_qualification"      // no release or qualification entry: run evidence only
	CondIssuer        = "issuer"                // another issuer
	CondClientID      = "client_id"             // another client
	CondReleaseDigest = "release_digest"        // a release the policy does not list
	CondMethod        = "method"                // another method
	CondPurpose       = "purpose"               // another purpose
	CondRuntimeDigest = "runtime_config_digest" // a runtime configuration the policy does not list
	CondMaxAge        = "max_age"               // the last entry is too old
	CondRevoked       = "revoked_key"           // a key that signed the chain is revoked now
)

// Admission is the answer of Admit: admit or deny, with every failed
// condition.
type Admission struct {
	Decision string      `json:"decision"` // admit | deny
	Policy   string      `json:"policy"`
	Head     string      `json:"head,omitempty"`
	Failed   []Condition `json:"failed"`
}

// Condition is one failed condition.
type Condition struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Admit evaluates a verified report against policy and the trust store as
// of now. It is an extra condition on top of consent, never a substitute:
// admission grants nothing by itself. Release, method, purpose and runtime
// are those of the chain's release and qualification entries (see
// [Report]); a chain without one — evidence about runs only — is denied.
func Admit(rep Report, p Policy, trust Trust, now time.Time) Admission {
	a := Admission{Policy: p.ID, Head: rep.Head, Failed: []Condition{}}
	fail := func(code, format string, args ...any) {
		a.Failed = append(a.Failed, Condition{Code: code, Detail: fmt.Sprintf(format, args...)})
	}
	if !rep.OK {
		fail(CondVerified, "the chain does not pass all three verdicts")
	}
	if rep.QualifiedAt == "" {
		fail(CondQualification, "the chain has no release or qualification entry: evidence about a run is not a qualification")
	}
	if rep.Issuer != p.Issuer {
		fail(CondIssuer, "the chain's issuer is not the policy's")
	}
	if rep.Subject == nil || rep.Subject.ClientID != p.ClientID {
		fail(CondClientID, "the chain is about another client")
	}
	if len(p.ReleaseDigests) > 0 && (rep.Release == nil || !slices.Contains(p.ReleaseDigests, rep.Release.Digest)) {
		fail(CondReleaseDigest, "the chain's release digest is not one the policy admits")
	}
	if p.Method != "" && rep.Method != p.Method {
		fail(CondMethod, "the chain's method is not the policy's")
	}
	if p.Purpose != "" && rep.Purpose != p.Purpose {
		fail(CondPurpose, "the chain's purpose is not the policy's")
	}
	if len(p.RuntimeConfigDigests) > 0 && (rep.Runtime == nil || !slices.Contains(p.RuntimeConfigDigests, rep.Runtime.ConfigDigest)) {
		fail(CondRuntimeDigest, "the chain's runtime configuration is not one the policy admits")
	}
	if p.MaxAge != "" {
		maxAge, _ := p.MaxAge.Duration()
		last, err := time.Parse(time.RFC3339, rep.LastIat)
		switch {
		case err != nil || now.Sub(last) > maxAge:
			fail(CondMaxAge, "the chain's last entry is older than %s", p.MaxAge)
		case last.Sub(now) > maxClockSkew:
			fail(CondMaxAge, "the chain's last entry is dated in the future")
		}
	}
	if p.RequireUnrevoked {
		for _, kid := range rep.KeysUsed {
			if at, ok := trust.revokedAt(rep.Issuer, kid); ok && !now.Before(at) {
				fail(CondRevoked, "a key that signed the chain is revoked")
				break
			}
		}
	}
	a.Decision = "admit"
	if len(a.Failed) > 0 {
		a.Decision = "deny"
	}
	return a
}
