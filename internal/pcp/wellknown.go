package pcp

import "strings"

// The tiers of the well-known keys (the sensitivity tiers of PCP §4).
const (
	tierStandard  = "standard"
	tierSensitive = "sensitive"
	tierCritical  = "critical"
)

// WellKnownKey is a key whose meaning phc knows: PCP's field names (PCP
// §2, §4) and a few of phc's own. Tier is the default sensitivity of the
// key and of every key below it; Synonyms are other names for it, which
// default to the same tier and answer a write with a hint to use Key.
type WellKnownKey struct {
	Key         string   `json:"key"`
	Tier        string   `json:"tier"`
	Description string   `json:"description"`
	Synonyms    []string `json:"synonyms,omitempty"`
}

// WellKnownKeys is the one table of well-known keys and their default
// tiers (the "Well-known keys" table of docs/pcp-compatibility.md is this
// table). A key not at or below any of them defaults to standard. The
// owner overrides the tier of any field. Order is the guide's.
var WellKnownKeys = []WellKnownKey{
	{Key: "identity.full_name", Tier: tierStandard, Description: "full legal name",
		Synonyms: []string{"identity.name", "identity.fullname", "identity.legal_name", "identity.display_name"}},
	{Key: "identity.preferred_name", Tier: tierStandard, Description: "the name to use",
		Synonyms: []string{"identity.nickname"}},
	{Key: "identity.dob", Tier: tierSensitive, Description: "date of birth",
		Synonyms: []string{"identity.date_of_birth", "identity.birthday", "identity.birth_date", "identity.birthdate"}},
	{Key: "identity.nationality", Tier: tierStandard, Description: "nationality"},
	{Key: "identity.citizenship", Tier: tierStandard, Description: "citizenships",
		Synonyms: []string{"identity.citizenships"}},
	{Key: "identity.passport_number", Tier: tierCritical, Description: "passport number",
		Synonyms: []string{"identity.passport", "identity.passport_no"}},
	{Key: "identity.ssn", Tier: tierCritical, Description: "social security number (user-only-write)",
		Synonyms: []string{"identity.social_security_number", "identity.social_security"}},
	{Key: "identity.tax_id", Tier: tierCritical, Description: "taxpayer identification number (user-only-write)",
		Synonyms: []string{"identity.tin", "identity.taxpayer_id"}},
	{Key: "addresses", Tier: tierSensitive, Description: "every address"},
	{Key: "addresses.current", Tier: tierSensitive, Description: "current address (street, city, state, postal, country)",
		Synonyms: []string{"addresses.home", "addresses.current_address"}},
	{Key: "addresses.shipping", Tier: tierSensitive, Description: "shipping address"},
	{Key: "financial", Tier: tierSensitive, Description: "every financial field"},
	{Key: "financial.filing_status", Tier: tierSensitive, Description: "tax filing status"},
	{Key: "financial.income", Tier: tierSensitive, Description: "income"},
	{Key: "financial.payment_method", Tier: tierSensitive, Description: "payment method"},
	{Key: "financial.bank_routing", Tier: tierCritical, Description: "bank routing number (user-only-write)",
		Synonyms: []string{"financial.routing_number"}},
	{Key: "financial.bank_account_number", Tier: tierCritical, Description: "bank account number (user-only-write)",
		Synonyms: []string{"financial.account_number", "financial.bank_account"}},
	{Key: "health", Tier: tierSensitive, Description: "every health field"},
	{Key: "medical", Tier: tierSensitive, Description: "every medical field (PCP's category)"},
	{Key: "credentials", Tier: tierCritical, Description: "every credential"},
	{Key: "employment.company", Tier: tierStandard, Description: "employer",
		Synonyms: []string{"employment.employer"}},
	{Key: "employment.title", Tier: tierStandard, Description: "job title",
		Synonyms: []string{"employment.job_title", "employment.position"}},
	{Key: "relationships.partner.name", Tier: tierStandard, Description: "partner's name"},
	{Key: "preferences.timezone", Tier: tierStandard, Description: "IANA time zone",
		Synonyms: []string{"preferences.tz", "preferences.time_zone"}},
	{Key: "preferences.communication_style", Tier: tierStandard, Description: "how to communicate"},
}

// Hint is a warning on a field write: the key written looks like another
// name for a well-known key (Reason "synonym") or a misspelling of one
// ("near_miss"), and Suggest is that key. The write is done as asked.
type Hint struct {
	Suggest string `json:"suggest"`
	Reason  string `json:"reason"`
}

// FieldHints returns the hints for a write to field id: none for a
// well-known key or a key below one, one naming the well-known key id is
// a synonym or a near miss of (one or two edits away, at the same depth,
// where the well-known key's last segment has at least four characters:
// identity.full-name of identity.full_name, adresses.current of
// addresses.current). It depends on id alone,
// never on what the vault holds, so it discloses nothing.
func FieldHints(id string) []Hint {
	for _, k := range WellKnownKeys {
		if underKey(k.Key, id) && strings.Contains(k.Key, ".") {
			return nil
		}
	}
	for _, k := range WellKnownKeys {
		for _, syn := range k.Synonyms {
			if id == syn {
				return []Hint{{Suggest: k.Key, Reason: "synonym"}}
			}
		}
	}
	depth := strings.Count(id, ".")
	best, bestDist := "", 3
	for _, k := range WellKnownKeys {
		last := k.Key[strings.LastIndex(k.Key, ".")+1:]
		if strings.Count(k.Key, ".") != depth || depth == 0 || len(last) < 4 {
			continue
		}
		if d := editDistance(id, k.Key, bestDist); d > 0 && d < bestDist {
			best, bestDist = k.Key, d
		}
	}
	if best == "" {
		return nil
	}
	return []Hint{{Suggest: best, Reason: "near_miss"}}
}

// editDistance is the Levenshtein distance of a and b (bytes: keys are
// ASCII), or limit when it is limit or more.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	// Every field write asks (see FieldHints): rows on the stack for
	// the well-known keys, all shorter than 64 bytes.
	n := len(b) + 1
	var rows [2][64]int
	prev, cur := rows[0][:], rows[1][:]
	if n > len(prev) {
		prev, cur = make([]int, n), make([]int, n)
	}
	prev, cur = prev[:n], cur[:n]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(cur[j-1]+1, prev[j]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// underKey reports whether key is k or below it.
func underKey(k, key string) bool {
	return key == k || strings.HasPrefix(key, k+".")
}
