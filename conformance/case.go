package conformance

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/phc-project/phc/schema"
)

// Group is one file of cases: cases about one route family or concern.
type Group struct {
	Group       string `json:"group"`
	Description string `json:"description"`
	Cases       []Case `json:"cases"`

	// File is the name of the file the group was loaded from.
	File string `json:"-"`
}

// Case is one requirement check: setup steps that build what it needs, then
// the steps whose outcomes it asserts. Every case is self-contained.
type Case struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Requires []string `json:"requires,omitempty"`
	Setup    []Step   `json:"setup,omitempty"`
	Steps    []Step   `json:"steps"`
	// KnownBug, if set, declares that the reference custodian fails this
	// case today and says why. The case still runs: its failure is
	// reported as XFAIL, and its passing as a failure (remove the mark).
	KnownBug string `json:"known_bug,omitempty"`

	// Group is the name of the case's group.
	Group string `json:"-"`
	// ordinal is the case's position in the loaded suite; ${case} uses it.
	ordinal int
}

// Step is one request and what its answer must be.
type Step struct {
	// As is who sends the request: "owner", "anonymous" (the default), a
	// consumer alias (its token is the variable tok_<alias>), or
	// "raw-token:<literal>" to send a literal bearer token.
	As     string `json:"as,omitempty"`
	Method string `json:"method"`
	// Path is the request target below the base URL, query included.
	Path string `json:"path"`
	// Headers are sent as given; "Host" sets the request's Host, and
	// "Authorization" replaces the one As implies.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is a JSON body; BodyRaw a literal one (for malformed input),
	// sent Repeat times over (for oversized input).
	Body    json.RawMessage `json:"body,omitempty"`
	BodyRaw *string         `json:"body_raw,omitempty"`
	Repeat  int             `json:"repeat,omitempty"`
	// Retry sends the request again while its answer matches While, at most
	// Max times in all; the last answer must match Expect.
	Retry *Retry `json:"retry,omitempty"`
	// Expect is the outcome; setup steps may omit it (any 2xx answer).
	Expect *Expect `json:"expect,omitempty"`
	// Capture stores values of a JSON answer in variables: name → JSON
	// Pointer. The name "@owner" replaces the owner's session token.
	Capture map[string]string `json:"capture,omitempty"`
}

// Retry repeats a step while its answer matches While.
type Retry struct {
	While Expect `json:"while"`
	Max   int    `json:"max"`
}

// Expect is an outcome: an outcome class (or status and constraint code),
// and optional assertions on the JSON answer, its headers and its bytes.
type Expect struct {
	Class      string `json:"class,omitempty"`
	Status     int    `json:"status,omitempty"`
	Constraint string `json:"constraint,omitempty"`
	// JSON maps JSON Pointers into the answer to expected values or
	// matchers (see the package doc).
	JSON map[string]json.RawMessage `json:"json,omitempty"`
	// Headers maps answer header names to expected values or matchers.
	Headers map[string]json.RawMessage `json:"headers,omitempty"`
	// SameAsStep names an earlier step of the case whose answer must be
	// byte-identical (status and body): hidden answers like absent.
	SameAsStep *int `json:"same_as_step,omitempty"`
	// BodyExcludes are strings the answer's bytes must not contain.
	BodyExcludes []string `json:"body_excludes,omitempty"`
}

// Requirements a case may declare.
const (
	// RequireOwner: the case acts as the owner, so it needs the owner's
	// session token.
	RequireOwner = "owner"
	// RequireLockable: the case locks the vault, or re-enters the owner's
	// password, so it needs the password and Secret Key (to unlock the
	// vault again). Such cases run last.
	RequireLockable = "lockable"
)

// outcome is what a class means on the wire.
type outcome struct {
	status     int    // 0: any 2xx
	constraint string // "" for success
}

// classes maps each outcome class to its status and constraint code
// (docs/design.md §6).
var classes = map[string]outcome{
	"ok":                     {0, ""},
	"invalid-request":        {400, "invalid_request"},
	"schema-violation":       {400, "schema_violation"},
	"unauthenticated":        {401, "unauthenticated"},
	"vault-locked":           {403, "vault_locked"},
	"session-required":       {403, "session_required"},
	"user-only-write":        {403, "user_only_write"},
	"scope-exceeded":         {403, "scope_exceeded"},
	"approval-denied":        {403, "approval_denied"},
	"approval-required":      {403, "approval_required"},
	"mode-denied":            {403, "mode_denied"},
	"restriction-blocked":    {403, "restriction_blocked"},
	"qualification-required": {403, "qualification_required"},
	"not-found":              {404, "not_found"},
	"method-not-allowed":     {405, "invalid_request"},
	"conflict":               {409, "conflict"},
	"too-large":              {413, "too_large"},
	"rate-limited":           {429, "rate_limited"},
	"purpose-required":       {403, "purpose_required"},
	// The Client-Vault v=1 resolve endpoint's own codes (docs/formats/reference.md).
	"unknown-key":    {401, "unknown_key"},
	"vault-disabled": {503, "disabled"},
}

// Classes returns every outcome class, sorted.
func Classes() []string {
	out := make([]string, 0, len(classes))
	for c := range classes {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// ClassConstraint returns the constraint code of an outcome class ("" for
// "ok") and whether the class exists.
func ClassConstraint(class string) (string, bool) {
	o, ok := classes[class]
	return o.constraint, ok
}

var (
	idPattern    = regexp.MustCompile(`^(PCP|PHC)-[0-9.]+-[a-z0-9-]+$`)
	aliasPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	varPattern   = regexp.MustCompile(`^(@owner|[a-z][a-z0-9_]{0,63})$`)
	varRef       = regexp.MustCompile(`\$\{([^}]*)\}`)
)

// IDPattern is the form of every case id: the requirement it checks (PCP or
// PHC, a section number) and a short name.
const IDPattern = `^(PCP|PHC)-[0-9.]+-[a-z0-9-]+$`

// builtin variables: run, case and host always, owner_token for cases that need
// the owner, password and secret_key for lockable cases.
var builtinVars = map[string]bool{"run": true, "case": true, "host": true, "owner_token": true, "password": true, "secret_key": true}

// caseLimits bound a case file.
var caseLimits = schema.Limits{MaxBytes: 8 << 20, MaxMembers: 1_000_000}

// Load reads every *.json file at the root of fsys as a group of cases,
// strictly (unknown or duplicate members are errors), and checks each case:
// a well-formed, unique id, known requirements and classes, variables that
// are defined before they are used, and consistent expectations.
func Load(fsys fs.FS) ([]Group, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var groups []Group
	seen := map[string]string{}
	ordinal := 0
	for _, name := range names {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var g Group
		if err := schema.DecodeInto(raw, caseLimits, &g); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		g.File = path.Base(name)
		if g.Group == "" || g.Description == "" || len(g.Cases) == 0 {
			return nil, fmt.Errorf("%s: a group needs group, description and cases", name)
		}
		for i := range g.Cases {
			c := &g.Cases[i]
			c.Group = g.Group
			c.ordinal = ordinal
			ordinal++
			if err := c.check(); err != nil {
				return nil, fmt.Errorf("%s: case %d (%s): %w", name, i, c.ID, err)
			}
			if prev, dup := seen[c.ID]; dup {
				return nil, fmt.Errorf("%s: case id %s already used in %s", name, c.ID, prev)
			}
			seen[c.ID] = name
		}
		groups = append(groups, g)
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("no *.json case files")
	}
	return groups, nil
}

// needs reports whether c declares requirement r.
func (c *Case) needs(r string) bool { return slices.Contains(c.Requires, r) }

func (c *Case) check() error {
	if !idPattern.MatchString(c.ID) {
		return fmt.Errorf("id does not match %s", IDPattern)
	}
	if c.Title == "" {
		return fmt.Errorf("no title")
	}
	if len(c.Steps) == 0 {
		return fmt.Errorf("no steps")
	}
	for _, r := range c.Requires {
		if r != RequireOwner && r != RequireLockable {
			return fmt.Errorf("unknown requirement %q", r)
		}
	}
	defined := map[string]bool{}
	for v := range builtinVars {
		defined[v] = true
	}
	all := append(append([]Step{}, c.Setup...), c.Steps...)
	for i := range all {
		s := &all[i]
		where := stepName(i, len(c.Setup))
		if err := c.checkStep(s, i-len(c.Setup), defined); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		for v := range s.Capture {
			defined[v] = true
		}
	}
	return nil
}

// stepName names step i of the combined setup+steps list.
func stepName(i, nsetup int) string {
	if i < nsetup {
		return fmt.Sprintf("setup %d", i)
	}
	return fmt.Sprintf("step %d", i-nsetup)
}

// checkStep checks one step; index is its index in Steps (negative for a
// setup step).
func (c *Case) checkStep(s *Step, index int, defined map[string]bool) error {
	switch s.Method {
	case "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS":
	default:
		return fmt.Errorf("method %q", s.Method)
	}
	if !strings.HasPrefix(s.Path, "/") {
		return fmt.Errorf("path must start with /")
	}
	switch {
	case s.As == "" || s.As == "anonymous":
	case s.As == "owner":
		if !c.needs(RequireOwner) {
			return fmt.Errorf("acts as the owner but does not require %q", RequireOwner)
		}
	case strings.HasPrefix(s.As, "raw-token:"):
	default:
		if !aliasPattern.MatchString(s.As) {
			return fmt.Errorf("as %q is not owner, anonymous, raw-token:… or a consumer alias", s.As)
		}
		if !defined["tok_"+s.As] {
			return fmt.Errorf("as %q: no earlier step captures tok_%s", s.As, s.As)
		}
	}
	if s.Body != nil && s.BodyRaw != nil {
		return fmt.Errorf("both body and body_raw")
	}
	if s.Repeat < 0 || (s.Repeat > 0 && s.BodyRaw == nil) {
		return fmt.Errorf("repeat needs body_raw")
	}
	if index >= 0 && s.Expect == nil {
		return fmt.Errorf("no expect")
	}
	if s.Retry != nil {
		if s.Retry.Max < 1 || s.Retry.Max > 20 {
			return fmt.Errorf("retry max must be 1-20")
		}
		if err := s.Retry.While.check(c, -1, defined); err != nil {
			return fmt.Errorf("retry while: %w", err)
		}
	}
	if s.Expect != nil {
		if err := s.Expect.check(c, index, defined); err != nil {
			return fmt.Errorf("expect: %w", err)
		}
	}
	for name, ptr := range s.Capture {
		if !varPattern.MatchString(name) || builtinVars[name] {
			return fmt.Errorf("capture name %q", name)
		}
		if name == "@owner" && !c.needs(RequireOwner) {
			return fmt.Errorf("captures @owner but does not require %q", RequireOwner)
		}
		if err := checkPointer(ptr); err != nil {
			return fmt.Errorf("capture %s: %w", name, err)
		}
	}
	// Variables used must be defined by now.
	texts := []string{s.Path, string(s.Body)}
	if s.BodyRaw != nil {
		texts = append(texts, *s.BodyRaw)
	}
	for k, v := range s.Headers {
		texts = append(texts, k, v)
	}
	if s.Expect != nil {
		for _, v := range s.Expect.JSON {
			texts = append(texts, string(v))
		}
		for _, v := range s.Expect.Headers {
			texts = append(texts, string(v))
		}
		texts = append(texts, s.Expect.BodyExcludes...)
	}
	for _, t := range texts {
		for _, m := range varRef.FindAllStringSubmatch(t, -1) {
			name := m[1]
			if !defined[name] {
				return fmt.Errorf("variable ${%s} is not defined by an earlier step", name)
			}
			if (name == "password" || name == "secret_key") && !c.needs(RequireLockable) {
				return fmt.Errorf("uses ${%s} but does not require %q", name, RequireLockable)
			}
			if name == "owner_token" && !c.needs(RequireOwner) {
				return fmt.Errorf("uses ${%s} but does not require %q", name, RequireOwner)
			}
		}
	}
	return nil
}

func (e *Expect) check(c *Case, index int, defined map[string]bool) error {
	if e.Class == "" && e.Constraint != "" {
		for name, o := range classes {
			if o.constraint == e.Constraint && (e.Status == 0 || e.Status == o.status) {
				e.Class = name
				break
			}
		}
	}
	if e.Class == "" && e.Status >= 200 && e.Status < 300 {
		e.Class = "ok"
	}
	o, ok := classes[e.Class]
	if !ok {
		return fmt.Errorf("unknown or missing class %q", e.Class)
	}
	if e.Constraint != "" && e.Constraint != o.constraint {
		return fmt.Errorf("constraint %q contradicts class %q", e.Constraint, e.Class)
	}
	if o.status != 0 && e.Status != 0 && e.Status != o.status {
		return fmt.Errorf("status %d contradicts class %q", e.Status, e.Class)
	}
	if o.status == 0 && e.Status != 0 && (e.Status < 200 || e.Status > 299) {
		return fmt.Errorf("status %d contradicts class ok", e.Status)
	}
	for ptr, v := range e.JSON {
		if err := checkPointer(ptr); err != nil {
			return err
		}
		if err := checkMatcher(v); err != nil {
			return fmt.Errorf("json %s: %w", ptr, err)
		}
	}
	for _, v := range e.Headers {
		if err := checkMatcher(v); err != nil {
			return fmt.Errorf("header: %w", err)
		}
	}
	if e.SameAsStep != nil && (*e.SameAsStep < 0 || *e.SameAsStep >= index) {
		return fmt.Errorf("same_as_step %d is not an earlier step", *e.SameAsStep)
	}
	return nil
}

func checkPointer(p string) error {
	if p != "" && !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q is not a JSON Pointer", p)
	}
	return nil
}
