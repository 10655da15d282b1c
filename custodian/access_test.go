package custodian

import (
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
)

func TestMatchKey(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"*", "identity.full_name", true},
		{"*", "a", true},
		{"identity.full_name", "identity.full_name", true},
		{"identity.full_name", "identity.full_names", false},
		{"identity.full_name", "identity", false},
		{"identity.full_name", "identity.full_name.first", false},
		{"identity.*", "identity.full_name", true},
		{"identity.*", "identity.name.first.initial", true},
		{"identity.*", "identity", false},
		{"identity.*", "identityx.name", false},
		{"identity.*", "xidentity.name", false},
		{"addresses.current.*", "addresses.current.city", true},
		{"addresses.current.*", "addresses.previous.city", false},
		{"addresses.current.*", "addresses.currently.city", false},
		{"learning", "learning.spanish", false},
		{"", "", true}, // validPattern refuses "", so it never reaches here
	}
	for _, tt := range tests {
		if got := engine.MatchKey(tt.pattern, tt.key); got != tt.want {
			t.Errorf("matchKey(%q, %q) = %v; want %v", tt.pattern, tt.key, got, tt.want)
		}
	}
	if !matchAny([]string{"a.b", "c.*"}, "c.d") || matchAny([]string{"a.b", "c.*"}, "a.c") || matchAny(nil, "a") {
		t.Errorf("matchAny does not combine matchKey with OR")
	}
}

// TestScopeCoversPrefix: a scope names a field or a dotted prefix; a field
// covers the keys below it (PCP §4/§10: addresses.current covers
// addresses.current.city), never a sibling that merely starts alike.
func TestScopeCoversPrefix(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"addresses.current", "addresses.current", true},
		{"addresses.current", "addresses.current.city", true},
		{"addresses.current", "addresses.current.geo.lat", true},
		{"addresses.current", "addresses.currently", false},
		{"addresses.current", "addresses.current-old", false},
		{"addresses.current", "addresses", false},
		{"addresses.*", "addresses", false},
		{"addresses.*", "addresses.current.city", true},
		{"*", "a", true},
	}
	for _, tt := range tests {
		if got := coversKey(tt.pattern, tt.key); got != tt.want {
			t.Errorf("coversKey(%q, %q) = %v; want %v", tt.pattern, tt.key, got, tt.want)
		}
	}
	if got := patternTier("identity"); got != SensitivityCritical {
		t.Errorf("patternTier(identity) = %s; want critical (it covers identity.ssn)", got)
	}
	if !patternsMeet("addresses.current", "addresses.current.*") || patternsMeet("a.b", "a.c") {
		t.Errorf("patternsMeet ignores a field's subtree")
	}
}

func TestValidKey(t *testing.T) {
	seg64 := strings.Repeat("a", 64)
	tests := []struct {
		key  string
		want bool
	}{
		{"identity", true},
		{"identity.full_name", true},
		{"learning.spanish.schedule", true},
		{"a-b.c_d.0x", true},
		{"0", true},
		{seg64, true},
		{seg64 + "a", false},
		{strings.Repeat("a.", 15) + "a", true},  // 16 segments
		{strings.Repeat("a.", 16) + "a", false}, // 17 segments
		{strings.Repeat(seg64[:63]+".", 4)[:255], true},
		{strings.Repeat(seg64[:63]+".", 4) + "ab", false},              // 258 bytes
		{strings.Repeat(seg64[:63]+".", 3) + seg64, true},              // exactly 256 bytes
		{strings.Repeat(seg64[:63]+".", 3) + seg64[:63] + ".a", false}, // 257 bytes
		{"", false},
		{".", false},
		{"a.", false},
		{".a", false},
		{"a..b", false},
		{"Identity", false},
		{"_a", false},
		{"-a", false},
		{"a.-b", false},
		{"a b", false},
		{"a*", false},
		{"*", false},
		{"a.*", false},
		{"a/b", false},
		{"é", false},
	}
	for _, tt := range tests {
		if got := model.ValidKey(tt.key); got != tt.want {
			t.Errorf("model.ValidKey(%q) = %v; want %v", tt.key, got, tt.want)
		}
	}
}

func TestValidPattern(t *testing.T) {
	tests := []struct {
		pattern string
		want    bool
	}{
		{"*", true},
		{"identity", true},
		{"identity.*", true},
		{"identity.full_name", true},
		{"a.b.c.*", true},
		{"", false},
		{".*", false},
		{"*.*", false},
		{"a.*.*", false},
		{"a.*.b", false},
		{"a*", false},
		{"*a", false},
		{"a.**", false},
		{"**", false},
		{"Identity.*", false},
		{"a..*", false},
	}
	for _, tt := range tests {
		if got := validPattern(tt.pattern); got != tt.want {
			t.Errorf("validPattern(%q) = %v; want %v", tt.pattern, got, tt.want)
		}
	}
}

// record builds a claim record with one active version.
func record(id, key, sensitivity string, personas ...string) *claimRecord {
	c := &Claim{ID: id, Version: 1, Key: key, Value: []byte(`"v"`), Sensitivity: sensitivity, Status: StatusActive}
	return testRecord(claimMeta{ID: id, Head: 1, Status: StatusActive, Personas: personas}, c)
}

// testRecord builds a record of versions (oldest first), all resident.
func testRecord(m claimMeta, versions ...*Claim) *claimRecord {
	r := newState().NewRecord(m, versions[len(versions)-1], versions[:len(versions)-1])
	return r
}

const (
	idA = "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA"
	idB = "clm_BBBBBBBBBBBBBBBBBBBBBBBBBB"
)

func TestGrantCovers(t *testing.T) {
	work := record(idA, "work.employer", SensitivityStandard, "work")
	both := record(idB, "identity.full_name", SensitivityStandard, "personal", "work")
	none := record(idB, "identity.full_name", SensitivityStandard)
	tests := []struct {
		name string
		sel  Selectors
		r    *claimRecord
		want bool
	}{
		{"no selectors cover nothing", Selectors{}, work, false},
		{"empty slices cover nothing", Selectors{Keys: []string{}, Personas: []string{}, Claims: []string{}}, work, false},
		{"keys *", Selectors{Keys: []string{"*"}}, work, true},
		{"keys exact", Selectors{Keys: []string{"work.employer"}}, work, true},
		{"keys prefix", Selectors{Keys: []string{"work.*"}}, work, true},
		{"keys other", Selectors{Keys: []string{"identity.*"}}, work, false},
		{"keys any of several", Selectors{Keys: []string{"identity.*", "work.*"}}, work, true},
		{"persona in", Selectors{Personas: []string{"work"}}, work, true},
		{"persona out", Selectors{Personas: []string{"personal"}}, work, false},
		{"persona any of several", Selectors{Personas: []string{"learning", "personal"}}, both, true},
		{"persona on a claim in none", Selectors{Personas: []string{"work"}}, none, false},
		{"claim in", Selectors{Claims: []string{idA}}, work, true},
		{"claim out", Selectors{Claims: []string{idB}}, work, false},
		{"keys and persona both match", Selectors{Keys: []string{"work.*"}, Personas: []string{"work"}}, work, true},
		{"keys match, persona not", Selectors{Keys: []string{"work.*"}, Personas: []string{"personal"}}, work, false},
		{"persona matches, keys not", Selectors{Keys: []string{"identity.*"}, Personas: []string{"work"}}, work, false},
		{"keys and claim match", Selectors{Keys: []string{"*"}, Claims: []string{idA}}, work, true},
		{"keys match, claim not", Selectors{Keys: []string{"*"}, Claims: []string{idB}}, work, false},
		{"persona and claim match", Selectors{Personas: []string{"work"}, Claims: []string{idB}}, both, true},
		{"persona matches, claim not", Selectors{Personas: []string{"work"}, Claims: []string{idA}}, both, false},
		{"all three match", Selectors{Keys: []string{"identity.*"}, Personas: []string{"personal"}, Claims: []string{idB}}, both, true},
		{"all three, one fails", Selectors{Keys: []string{"identity.*"}, Personas: []string{"learning"}, Claims: []string{idB}}, both, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Grant{Selectors: tt.sel}
			if got := grantCovers(g, tt.r); got != tt.want {
				t.Errorf("Grant{Selectors: %+v}.covers(%s in %v) = %v; want %v",
					tt.sel, tt.r.Head().Key, tt.r.Meta.Personas, got, tt.want)
			}
		})
	}
}

// TestGrantCoversHeadKey checks that a correction's key (the head version's)
// is what a key selector sees.
func TestGrantCoversHeadKey(t *testing.T) {
	r := record(idA, "learning.spanish", SensitivityStandard)
	v2 := *r.Head()
	v2.Version, v2.Key = 2, "work.spanish"
	m := r.Meta
	m.Head = 2
	r = testRecord(m, r.Head(), &v2)
	if grantCovers((&Grant{Selectors: Selectors{Keys: []string{"learning.*"}}}), r) {
		t.Errorf("covers used a superseded version's key")
	}
}

func TestGrantAllows(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	revoked := now.Add(-time.Minute)
	tests := []struct {
		name string
		g    Grant
		op   string
		at   time.Time
		want bool
	}{
		{"in force", Grant{Operations: []string{OpRead}, ExpiresAt: now.Add(time.Hour)}, OpRead, now, true},
		{"other operation", Grant{Operations: []string{OpContribute}, ExpiresAt: now.Add(time.Hour)}, OpRead, now, false},
		{"contribute is not read", Grant{Operations: []string{OpContribute}, ExpiresAt: now.Add(time.Hour)}, OpRead, now, false},
		{"read is not contribute", Grant{Operations: []string{OpRead}, ExpiresAt: now.Add(time.Hour)}, OpContribute, now, false},
		{"one of several", Grant{Operations: []string{OpRead, OpContribute}, ExpiresAt: now.Add(time.Hour)}, OpContribute, now, true},
		{"a nanosecond before expiry", Grant{Operations: []string{OpRead}, ExpiresAt: now}, OpRead, now.Add(-time.Nanosecond), true},
		{"at the exact expiry", Grant{Operations: []string{OpRead}, ExpiresAt: now}, OpRead, now, false},
		{"after expiry", Grant{Operations: []string{OpRead}, ExpiresAt: now}, OpRead, now.Add(time.Second), false},
		{"revoked", Grant{Operations: []string{OpRead}, ExpiresAt: now.Add(time.Hour), RevokedAt: &revoked}, OpRead, now, false},
		{"no operations", Grant{ExpiresAt: now.Add(time.Hour)}, OpRead, now, false},
	}
	for _, tt := range tests {
		if got := tt.g.Allows(tt.op, tt.at); got != tt.want {
			t.Errorf("%s: allows(%q) = %v; want %v", tt.name, tt.op, got, tt.want)
		}
	}
}

func TestRestrictionsAllow(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	local := &Grant{Route: "local"}
	hosted := &Grant{Route: "hosted"}
	unrouted := &Grant{}
	purposes := func(ps ...any) map[string]any { return map[string]any{"purposes": ps} }
	at := func(t time.Time) map[string]any { return map[string]any{"at": t.Format(time.RFC3339Nano)} }
	tests := []struct {
		name    string
		rs      []Restriction
		purpose string
		g       *Grant
		want    bool
	}{
		{"none", nil, "assist", unrouted, true},

		{"purpose_only listed", []Restriction{{Type: RestrictPurposeOnly, Mandatory: true, Params: purposes("assist", "tutoring")}}, "tutoring", unrouted, true},
		{"purpose_only not listed", []Restriction{{Type: RestrictPurposeOnly, Mandatory: true, Params: purposes("assist")}}, "marketing", unrouted, false},
		{"purpose_only case differs", []Restriction{{Type: RestrictPurposeOnly, Mandatory: true, Params: purposes("assist")}}, "Assist", unrouted, false},
		{"purpose_only advisory still enforced", []Restriction{{Type: RestrictPurposeOnly, Params: purposes("assist")}}, "marketing", unrouted, false},
		{"purpose_only without params", []Restriction{{Type: RestrictPurposeOnly, Mandatory: true}}, "assist", unrouted, false},
		{"purpose_only purposes not a list", []Restriction{{Type: RestrictPurposeOnly, Mandatory: true, Params: map[string]any{"purposes": "assist"}}}, "assist", unrouted, false},
		{"purpose_only non-string entries", []Restriction{{Type: RestrictPurposeOnly, Mandatory: true, Params: purposes(1, true)}}, "assist", unrouted, false},

		{"expires in the future", []Restriction{{Type: RestrictExpires, Mandatory: true, Params: at(now.Add(time.Second))}}, "assist", unrouted, true},
		{"expires at the exact instant", []Restriction{{Type: RestrictExpires, Mandatory: true, Params: at(now)}}, "assist", unrouted, false},
		{"expires in the past", []Restriction{{Type: RestrictExpires, Mandatory: true, Params: at(now.Add(-time.Hour))}}, "assist", unrouted, false},
		{"expires with an offset", []Restriction{{Type: RestrictExpires, Mandatory: true, Params: map[string]any{"at": "2026-03-01T13:30:00+01:00"}}}, "assist", unrouted, true},
		{"expires advisory still enforced", []Restriction{{Type: RestrictExpires, Params: at(now.Add(-time.Hour))}}, "assist", unrouted, false},
		{"expires in lower-case RFC 3339 (schema-valid)", []Restriction{{Type: RestrictExpires, Mandatory: true, Params: map[string]any{"at": "2030-01-01t00:00:00z"}}}, "assist", unrouted, true},
		{"expires unparsable", []Restriction{{Type: RestrictExpires, Mandatory: true, Params: map[string]any{"at": "tomorrow"}}}, "assist", unrouted, false},
		{"expires without at", []Restriction{{Type: RestrictExpires, Mandatory: true}}, "assist", unrouted, false},

		{"local_processing_only, local route", []Restriction{{Type: RestrictLocalProcessingOnly, Mandatory: true}}, "assist", local, true},
		{"local_processing_only, hosted route", []Restriction{{Type: RestrictLocalProcessingOnly, Mandatory: true}}, "assist", hosted, false},

		// no_training tests the grant's purpose category, never the purpose's text.
		{"no_training, personalisation", []Restriction{{Type: RestrictNoTraining, Mandatory: true}}, "assist", &Grant{Category: CategoryPersonalisation}, true},
		{"no_training, model training", []Restriction{{Type: RestrictNoTraining, Mandatory: true}}, "assist", &Grant{Category: CategoryModelTraining}, false},
		{"no_training, model-training named as personalisation", []Restriction{{Type: RestrictNoTraining, Mandatory: true}}, "fine_tuning", &Grant{Category: CategoryModelTraining}, false},
		{"no_training, no category", []Restriction{{Type: RestrictNoTraining, Mandatory: true}}, "assist", unrouted, false},
		{"no_training, purpose text model-training, no category", []Restriction{{Type: RestrictNoTraining, Mandatory: true}}, "model-training", unrouted, false},

		{"no_export does not limit a read", []Restriction{{Type: RestrictNoExport, Mandatory: true}}, "assist", hosted, true},
		{"source_controlled does not limit a read", []Restriction{{Type: RestrictSourceControlled, Mandatory: true, Holder: "Example Corp"}}, "assist", unrouted, true},
		{"third_party does not limit a read", []Restriction{{Type: RestrictThirdParty, Mandatory: false, Holder: "a friend"}}, "assist", unrouted, true},

		{"unknown mandatory blocks", []Restriction{{Type: "org.example.embargo", Mandatory: true}}, "assist", unrouted, false},
		{"unknown advisory is ignored", []Restriction{{Type: "org.example.embargo", Mandatory: false}}, "assist", unrouted, true},
		{"unknown mandatory blocks among allowed ones", []Restriction{
			{Type: RestrictNoExport, Mandatory: true},
			{Type: RestrictPurposeOnly, Mandatory: true, Params: purposes("assist")},
			{Type: "x-future", Mandatory: true},
		}, "assist", local, false},
		{"all satisfied together", []Restriction{
			{Type: RestrictNoExport, Mandatory: true},
			{Type: RestrictPurposeOnly, Mandatory: true, Params: purposes("assist")},
			{Type: RestrictExpires, Mandatory: true, Params: at(now.Add(time.Hour))},
			{Type: RestrictLocalProcessingOnly, Mandatory: true},
			{Type: RestrictNoTraining, Mandatory: true},
			{Type: "x-future", Mandatory: false},
		}, "assist", &Grant{Route: "local", Category: CategoryServiceProvision}, true},
		{"one of several fails", []Restriction{
			{Type: RestrictPurposeOnly, Mandatory: true, Params: purposes("assist")},
			{Type: RestrictLocalProcessingOnly, Mandatory: true},
		}, "assist", hosted, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := restrictionsAllow(tt.rs, tt.purpose, tt.g, now); got != tt.want {
				t.Errorf("restrictionsAllow(%+v, %q, route %q) = %v; want %v", tt.rs, tt.purpose, tt.g.Route, got, tt.want)
			}
		})
	}
	for _, typ := range []string{RestrictNoExport, RestrictPurposeOnly, RestrictExpires, RestrictSourceControlled,
		RestrictThirdParty, RestrictNoTraining, RestrictLocalProcessingOnly} {
		if !model.KnownRestriction(typ) {
			t.Errorf("model.KnownRestriction(%q) = false; want true", typ)
		}
	}
	if model.KnownRestriction("x-future") {
		t.Errorf("model.KnownRestriction(%q) = true; want false", "x-future")
	}
}

func TestReadGrant(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	all := &Grant{ID: "grt_ALL", Purpose: "assist", Operations: []string{OpRead}, ExpiresAt: now.Add(time.Hour),
		Selectors: Selectors{Keys: []string{"*"}}}
	reader := model.ConsumerPrincipal("app", &ServiceToken{Consumer: "app", Mode: ModeRead, Scope: []string{"*"}}, "")
	withToken := func(mode string, scope ...string) Principal {
		return model.ConsumerPrincipal("app", &ServiceToken{Consumer: "app", Mode: mode, Scope: scope}, "")
	}
	retracted := record(idA, "identity.full_name", SensitivityStandard)
	retracted.Meta.Status = StatusDeleted
	restricted := record(idA, "identity.full_name", SensitivityStandard)
	restricted.Head().Restrictions = []Restriction{{Type: "x-embargo", Mandatory: true}}

	tests := []struct {
		name    string
		p       Principal
		r       *claimRecord
		purpose string
		grants  []*Grant
		want    bool
	}{
		{"public", reader, record(idA, "identity.nickname", SensitivityPublic), "assist", []*Grant{all}, true},
		{"standard", reader, record(idA, "identity.full_name", SensitivityStandard), "assist", []*Grant{all}, true},
		{"sensitive never under an owner grant", reader, record(idA, "health.allergies", SensitivitySensitive), "assist", []*Grant{all}, false},
		{"critical never under an owner grant", reader, record(idA, "identity.ssn", SensitivityCritical), "assist", []*Grant{all}, false},
		{"sensitive even with a claim selector", reader, record(idA, "health.allergies", SensitivitySensitive), "assist",
			[]*Grant{{ID: "g", Purpose: "assist", Selectors: Selectors{Claims: []string{idA}}}}, false},
		{"purpose mismatch", reader, record(idA, "identity.full_name", SensitivityStandard), "marketing", []*Grant{all}, false},
		{"not active", reader, retracted, "assist", []*Grant{all}, false},
		{"no grants", reader, record(idA, "identity.full_name", SensitivityStandard), "assist", nil, false},
		{"grant does not cover", reader, record(idA, "identity.full_name", SensitivityStandard), "assist",
			[]*Grant{{ID: "g", Purpose: "assist", Selectors: Selectors{Keys: []string{"work.*"}}}}, false},
		{"token outside scope", withToken(ModeRead, "work.*"), record(idA, "identity.full_name", SensitivityStandard), "assist", []*Grant{all}, false},
		{"token inside scope", withToken(ModeRead, "identity.*"), record(idA, "identity.full_name", SensitivityStandard), "assist", []*Grant{all}, true},
		{"write-only token", withToken(ModeWrite, "*"), record(idA, "identity.full_name", SensitivityStandard), "assist", []*Grant{all}, false},
		{"read-write token", withToken(ModeReadWrite, "*"), record(idA, "identity.full_name", SensitivityStandard), "assist", []*Grant{all}, true},
		{"no token", model.ConsumerPrincipal("app", nil, ""), record(idA, "identity.full_name", SensitivityStandard), "assist", []*Grant{all}, false},
		{"restriction blocks", reader, restricted, "assist", []*Grant{all}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newState().readGrant(tt.grants, tt.p, tt.r, tt.purpose, now)
			if (got != nil) != tt.want {
				t.Errorf("readGrant(%s, %s) = %v; want a grant: %v", tt.r.Head().Key, tt.r.Head().Sensitivity, got, tt.want)
			}
		})
	}
}

func TestDefaultSensitivityAndRaiseTier(t *testing.T) {
	tiers := map[string]string{
		"identity.ssn":                  SensitivityCritical,
		"credentials.github.token":      SensitivityCritical,
		"financial.bank_account_number": SensitivityCritical,
		"identity.dob":                  SensitivitySensitive,
		"health.allergies":              SensitivitySensitive,
		"financial.income":              SensitivitySensitive,
		"addresses.current.city":        SensitivitySensitive,
		"identity.full_name":            SensitivityStandard,
		"learning.spanish.level":        SensitivityStandard,
	}
	for key, want := range tiers {
		if got := defaultSensitivity(key); got != want {
			t.Errorf("defaultSensitivity(%q) = %q; want %q", key, got, want)
		}
	}
	raise := []struct{ a, b, want string }{
		{SensitivityStandard, "", SensitivityStandard},
		{SensitivityStandard, SensitivityPublic, SensitivityStandard},
		{SensitivityStandard, SensitivitySensitive, SensitivitySensitive},
		{SensitivitySensitive, SensitivityStandard, SensitivitySensitive},
		{SensitivityCritical, SensitivityPublic, SensitivityCritical},
		{SensitivityPublic, SensitivityCritical, SensitivityCritical},
	}
	for _, tt := range raise {
		if got := model.RaiseTier(tt.a, tt.b); got != tt.want {
			t.Errorf("model.RaiseTier(%q, %q) = %q; want %q", tt.a, tt.b, got, tt.want)
		}
	}
}
