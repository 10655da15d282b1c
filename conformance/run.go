package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Config says how to run the suite against a target.
type Config struct {
	// Groups are the cases to run; nil means the shipped [Suite].
	Groups []Group
	// OwnerToken is the owner's session token (ctx_…). Without it, cases
	// that need the owner are skipped, unless the vault is locked and
	// Password and SecretKey can unlock it.
	OwnerToken string
	// Password and SecretKey unlock the vault. Without them, cases that
	// lock the vault are skipped.
	Password  string
	SecretKey string
	// Match, if set, selects the cases whose id matches it.
	Match *regexp.Regexp
	// LeaveLocked leaves the vault as the last case that locks it left it,
	// instead of unlocking it again (waiting out the unlock rate limit if
	// need be). For throw-away targets.
	LeaveLocked bool
	// Run is the value of ${run}; empty means a random one.
	Run string
	// StepTimeout bounds one request; 0 means 30 seconds.
	StepTimeout time.Duration
	// Log, if set, receives progress notes (waits, restores).
	Log func(format string, args ...any)
}

// Outcome of one case.
type Outcome string

const (
	Pass Outcome = "PASS"
	Fail Outcome = "FAIL"
	Skip Outcome = "SKIP"
	// XFail is the failure of a case declared a known bug. It does not
	// fail the run; the report lists it.
	XFail Outcome = "XFAIL"
)

// Result is the outcome of one case. Detail says why it failed or was
// skipped; secrets and tokens in it are redacted.
type Result struct {
	ID       string        `json:"id"`
	Group    string        `json:"group"`
	Title    string        `json:"title"`
	Outcome  Outcome       `json:"outcome"`
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Report is the outcome of a run.
type Report struct {
	Target  string   `json:"target"`
	Run     string   `json:"run"`
	Results []Result `json:"results"`
	// Notes are remarks about the run itself (a restore that failed, …).
	Notes []string `json:"notes,omitempty"`
}

// Count returns how many results have outcome o.
func (r *Report) Count(o Outcome) int {
	n := 0
	for _, res := range r.Results {
		if res.Outcome == o {
			n++
		}
	}
	return n
}

// OK reports whether no case failed.
func (r *Report) OK() bool { return r.Count(Fail) == 0 }

// Cases returns the cases of groups in order.
func Cases(groups []Group) []*Case {
	var out []*Case
	for gi := range groups {
		for ci := range groups[gi].Cases {
			out = append(out, &groups[gi].Cases[ci])
		}
	}
	return out
}

// runner holds a run's state.
type runner struct {
	target  Target
	cfg     Config
	owner   string // the owner's current session token
	run     string
	host    string   // the target's host[:port], for ${host}
	secrets []string // literal secrets to redact
	report  *Report
	// lockables counts the selected cases that lock the vault and have
	// not run yet.
	lockables int
}

// Run runs the selected cases of cfg.Groups (or [Suite]) against target,
// one at a time in order, with the cases that lock the vault last; after
// each of those it unlocks the vault again (unless cfg.LeaveLocked after
// the last one). The error reports a run that could not start: an
// unreachable target, a locked vault without the means to unlock it, a
// refused owner token.
func Run(ctx context.Context, target Target, cfg Config) (*Report, error) {
	s, err := Start(ctx, target, cfg)
	if err != nil {
		return nil, err
	}
	for _, c := range s.Cases() {
		s.RunCase(ctx, c)
	}
	return s.Report(), nil
}

// Session is a run that has started: its driver runs each of its cases,
// in order, with RunCase ([Run] does so in a loop; package
// conformancetest runs each case as a subtest).
type Session struct {
	r     *runner
	cases []*Case
}

// Start loads cfg.Groups (or [Suite]), checks that target answers and its
// vault is usable (see [Run] for the errors), and returns the session.
func Start(ctx context.Context, target Target, cfg Config) (*Session, error) {
	groups := cfg.Groups
	if groups == nil {
		var err error
		if groups, err = Suite(); err != nil {
			return nil, err
		}
	}
	r, err := newRunner(ctx, target, cfg)
	if err != nil {
		return nil, err
	}
	return &Session{r: r, cases: r.order(groups)}, nil
}

// Cases returns the selected cases in the order they must run: those that
// lock the vault last.
func (s *Session) Cases() []*Case { return s.cases }

// RunCase runs c, one of s.Cases() taken in order, each once, and adds
// its result to the report.
func (s *Session) RunCase(ctx context.Context, c *Case) Result {
	res := s.r.runCase(ctx, c)
	s.r.report.Results = append(s.r.report.Results, res)
	return res
}

// Report is the report so far: the results of the cases run, and the
// notes about the run.
func (s *Session) Report() *Report { return s.r.report }

func newRunner(ctx context.Context, target Target, cfg Config) (*runner, error) {
	if cfg.StepTimeout == 0 {
		cfg.StepTimeout = 30 * time.Second
	}
	if cfg.Run == "" {
		cfg.Run = randomRun()
	}
	if !runPattern.MatchString(cfg.Run) {
		return nil, fmt.Errorf("run id %q: want 1-16 lower-case letters and digits", cfg.Run)
	}
	r := &runner{target: target, cfg: cfg, owner: cfg.OwnerToken, run: cfg.Run,
		report: &Report{Target: target.String(), Run: cfg.Run}}
	if u, err := url.Parse(target.String()); err == nil && u.Host != "" {
		r.host = u.Host
	}
	for _, s := range []string{cfg.Password, cfg.SecretKey, cfg.OwnerToken} {
		if s != "" {
			r.secrets = append(r.secrets, s)
		}
	}
	if err := r.preflight(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// order returns the selected cases: those that lock the vault last.
func (r *runner) order(groups []Group) []*Case {
	var first, last []*Case
	for _, c := range Cases(groups) {
		if r.cfg.Match != nil && !r.cfg.Match.MatchString(c.ID) {
			continue
		}
		if c.needs(RequireLockable) {
			last = append(last, c)
		} else {
			first = append(first, c)
		}
	}
	r.lockables = len(last)
	return append(first, last...)
}

// runPattern keeps ${run} usable in key segments, persona ids and consumer
// names.
var runPattern = regexp.MustCompile(`^[a-z0-9]{1,16}$`)

func randomRun() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	var b [8]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return string(b[:])
}

// status reads GET /context/status.
func (r *runner) status(ctx context.Context) (locked bool, err error) {
	resp, err := r.send(ctx, &Request{Method: "GET", Path: "/context/status"})
	if err != nil {
		return false, err
	}
	var st struct {
		Locked *bool `json:"locked"`
	}
	if resp.Status != http.StatusOK || json.Unmarshal(resp.Body, &st) != nil || st.Locked == nil {
		return false, fmt.Errorf("GET /context/status answered %d %s", resp.Status, r.redact(snippet(resp.Body)))
	}
	return *st.Locked, nil
}

// preflight checks that the target answers and the vault is usable.
func (r *runner) preflight(ctx context.Context) error {
	locked, err := r.status(ctx)
	if err != nil {
		return fmt.Errorf("target %s: %w", r.target, err)
	}
	if locked {
		if !r.canUnlock() {
			return fmt.Errorf("target %s: the vault is locked (unlock it, or give the password and Secret Key)", r.target)
		}
		return r.unlock(ctx, false)
	}
	if r.owner == "" {
		return nil
	}
	ok, err := r.ownerWorks(ctx)
	if err != nil {
		return fmt.Errorf("target %s: %w", r.target, err)
	}
	if !ok {
		return fmt.Errorf("target %s refuses the owner token", r.target)
	}
	return nil
}

func (r *runner) canUnlock() bool { return r.cfg.Password != "" && r.cfg.SecretKey != "" }

// ownerWorks reports whether the owner token is accepted.
func (r *runner) ownerWorks(ctx context.Context) (bool, error) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+r.owner)
	resp, err := r.send(ctx, &Request{Method: "GET", Path: "/phc/v1/personas", Header: h})
	if err != nil {
		return false, err
	}
	return resp.Status == http.StatusOK, nil
}

// unlock unlocks the vault with the password and Secret Key and takes the
// new session as the owner's. With wait, it waits out the unlock rate limit.
func (r *runner) unlock(ctx context.Context, wait bool) error {
	body, _ := json.Marshal(map[string]string{"password": r.cfg.Password, "secret_key": r.cfg.SecretKey})
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := r.send(ctx, &Request{Method: "POST", Path: "/context/unlock", Body: body})
		if err != nil {
			return err
		}
		switch resp.Status {
		case http.StatusOK:
			var out struct {
				Token string `json:"token"`
			}
			if json.Unmarshal(resp.Body, &out) != nil || out.Token == "" {
				return fmt.Errorf("unlock answered 200 without a token")
			}
			r.owner = out.Token
			r.secrets = append(r.secrets, out.Token)
			return nil
		case http.StatusTooManyRequests:
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			if !wait || secs <= 0 || time.Now().Add(time.Duration(secs)*time.Second).After(deadline) {
				return fmt.Errorf("unlock is rate limited (Retry-After %q)", resp.Header.Get("Retry-After"))
			}
			r.logf("waiting %ds for the unlock rate limit to clear", secs)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(secs) * time.Second):
			}
		default:
			return fmt.Errorf("unlock answered %d %s", resp.Status, r.redact(snippet(resp.Body)))
		}
	}
}

// restore brings the vault back to unlocked with a known owner session
// after a case that locked it.
func (r *runner) restore(ctx context.Context) error {
	locked, err := r.status(ctx)
	if err != nil {
		return err
	}
	if !locked {
		ok, err := r.ownerWorks(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("the vault is unlocked, but with a session the suite does not know")
		}
		return nil
	}
	return r.unlock(ctx, true)
}

func (r *runner) logf(format string, args ...any) {
	if r.cfg.Log != nil {
		r.cfg.Log(format, args...)
	}
}

// skipReason says why c cannot run, or "".
func (r *runner) skipReason(c *Case) string {
	if c.needs(RequireLockable) && !r.canUnlock() {
		return "skipped: needs the password and Secret Key (--password-env, --secret-key-file) to lock and unlock the vault"
	}
	if c.needs(RequireOwner) && r.owner == "" {
		return "skipped: needs the owner's session token (--owner-token)"
	}
	return ""
}

// stepError is a failed step.
type stepError struct {
	where string // "setup 1", "step 3"
	req   string // "POST /phc/v1/proposals as tutor"
	err   error
}

func (e *stepError) Error() string { return e.where + " (" + e.req + "): " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// runCase runs one case. After a case that locks the vault it restores
// the vault, except after the last such case with Config.LeaveLocked.
func (r *runner) runCase(ctx context.Context, c *Case) Result {
	res := Result{ID: c.ID, Group: c.Group, Title: c.Title}
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	if c.needs(RequireLockable) {
		r.lockables--
	}
	if why := r.skipReason(c); why != "" {
		res.Outcome, res.Detail = Skip, why
		return res
	}
	err := r.execute(ctx, c)
	if c.needs(RequireLockable) && !(r.cfg.LeaveLocked && r.lockables == 0) {
		if rerr := r.restore(ctx); rerr != nil {
			note := fmt.Sprintf("after %s: could not restore the vault: %v", c.ID, rerr)
			r.report.Notes = append(r.report.Notes, r.redact(note))
			r.owner = ""
		}
	}
	switch {
	case err == nil && c.KnownBug != "":
		res.Outcome, res.Detail = Fail, "declared a known bug, but passes: remove its known_bug mark"
	case err == nil:
		res.Outcome = Pass
	case errors.Is(err, ErrUnsupported):
		res.Outcome, res.Detail = Skip, "skipped: "+r.redact(err.Error())
	case c.KnownBug != "":
		res.Outcome, res.Detail = XFail, r.redact("known bug: "+c.KnownBug+" — "+err.Error())
	default:
		res.Outcome, res.Detail = Fail, r.redact(err.Error())
	}
	return res
}

// execute runs the steps of c.
func (r *runner) execute(ctx context.Context, c *Case) error {
	vs := vars{}
	setString := func(name, v string) {
		raw, _ := json.Marshal(v)
		vs[name] = raw
	}
	setString("run", r.run)
	setString("host", r.host)
	setString("case", fmt.Sprintf("%s-%d", r.run, c.ordinal))
	if c.needs(RequireOwner) {
		setString("owner_token", r.owner)
	}
	if c.needs(RequireLockable) {
		setString("password", r.cfg.Password)
		setString("secret_key", r.cfg.SecretKey)
	}
	var answers []*Response
	all := append(append([]Step{}, c.Setup...), c.Steps...)
	for i := range all {
		s := &all[i]
		where := stepName(i, len(c.Setup))
		resp, desc, err := r.step(ctx, s, vs, answers)
		if err != nil {
			return &stepError{where: where, req: desc, err: err}
		}
		if i >= len(c.Setup) {
			answers = append(answers, resp)
		}
	}
	return nil
}

// step sends one step (with its retries) and checks and captures its
// answer. desc describes the request for reports.
func (r *runner) step(ctx context.Context, s *Step, vs vars, answers []*Response) (*Response, string, error) {
	req, desc, err := r.build(s, vs)
	if err != nil {
		return nil, desc, err
	}
	expect := s.Expect
	if expect == nil {
		expect = &Expect{Class: "ok"}
	}
	tries := 1
	if s.Retry != nil {
		tries = s.Retry.Max
	}
	var resp *Response
	for try := 1; ; try++ {
		sctx, cancel := context.WithTimeout(ctx, r.cfg.StepTimeout)
		resp, err = r.target.Do(sctx, req)
		cancel()
		if err != nil {
			if errors.Is(err, ErrUnsupported) {
				return nil, desc, err
			}
			return nil, desc, fmt.Errorf("no answer: %w", err)
		}
		if s.Retry == nil || try >= tries || r.check(&s.Retry.While, resp, vs, answers) != nil {
			break
		}
	}
	if err := r.check(expect, resp, vs, answers); err != nil {
		return resp, desc, err
	}
	if len(s.Capture) > 0 {
		doc, err := decodeJSON(resp.Body)
		if err != nil {
			return resp, desc, fmt.Errorf("capture: the answer is not JSON")
		}
		for _, name := range sortedKeys(s.Capture) {
			v, ok := resolve(doc, s.Capture[name])
			if !ok {
				return resp, desc, fmt.Errorf("capture %s: nothing at %s", name, s.Capture[name])
			}
			raw, _ := json.Marshal(v)
			if name == "@owner" {
				tok, _ := v.(string)
				if tok == "" {
					return resp, desc, fmt.Errorf("capture @owner: not a string")
				}
				r.owner = tok
				r.secrets = append(r.secrets, tok)
				continue
			}
			vs[name] = raw
		}
	}
	return resp, desc, nil
}

// build makes the request of s with variables substituted.
func (r *runner) build(s *Step, vs vars) (*Request, string, error) {
	as := s.As
	if as == "" {
		as = "anonymous"
	}
	desc := s.Method + " " + s.Path + " as " + as
	path, err := vs.interpolate(s.Path)
	if err != nil {
		return nil, desc, err
	}
	desc = s.Method + " " + path + " as " + as
	req := &Request{Method: s.Method, Path: path, Header: http.Header{}}
	switch {
	case as == "anonymous":
	case as == "owner":
		req.Header.Set("Authorization", "Bearer "+r.owner)
	case strings.HasPrefix(as, "raw-token:"):
		tok, err := vs.interpolate(strings.TrimPrefix(as, "raw-token:"))
		if err != nil {
			return nil, desc, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	default:
		tok, ok := vs.text("tok_" + as)
		if !ok {
			return nil, desc, fmt.Errorf("no token for consumer alias %q", as)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for _, k := range sortedKeys(s.Headers) {
		v, err := vs.interpolate(s.Headers[k])
		if err != nil {
			return nil, desc, err
		}
		if http.CanonicalHeaderKey(k) == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	switch {
	case s.Body != nil:
		v, err := vs.substituteRaw(s.Body)
		if err != nil {
			return nil, desc, err
		}
		if req.Body, err = json.Marshal(v); err != nil {
			return nil, desc, err
		}
	case s.BodyRaw != nil:
		b, err := vs.interpolate(*s.BodyRaw)
		if err != nil {
			return nil, desc, err
		}
		n := max(s.Repeat, 1)
		req.Body = bytes.Repeat([]byte(b), n)
	}
	return req, desc, nil
}

// check compares an answer with an expectation.
func (r *runner) check(e *Expect, resp *Response, vs vars, answers []*Response) error {
	o := classes[e.Class]
	var doc any
	docErr := errors.New("the answer is not JSON")
	if d, err := decodeJSON(resp.Body); err == nil {
		doc, docErr = d, nil
	}
	gotConstraint := ""
	if m, ok := doc.(map[string]any); ok {
		gotConstraint, _ = m["constraint"].(string)
	}
	got := strconv.Itoa(resp.Status)
	if gotConstraint != "" {
		got += " " + gotConstraint
	}
	want := e.Class
	if e.Status != 0 {
		want = strconv.Itoa(e.Status) + " (" + e.Class + ")"
	} else if o.status != 0 {
		want = strconv.Itoa(o.status) + " " + o.constraint
	}
	wantStatus := e.Status
	if wantStatus == 0 {
		wantStatus = o.status
	}
	switch {
	case wantStatus != 0 && resp.Status != wantStatus:
		return fmt.Errorf("answered %s; want %s", got, want)
	case wantStatus == 0 && (resp.Status < 200 || resp.Status > 299):
		return fmt.Errorf("answered %s; want %s", got, want)
	}
	if o.constraint != "" {
		// Every error has the one wire form of docs/design.md §6.
		if docErr != nil {
			return fmt.Errorf("answered %d with a body that is not JSON: %s", resp.Status, snippet(resp.Body))
		}
		m, _ := doc.(map[string]any)
		if msg, _ := m["error"].(string); msg == "" {
			return fmt.Errorf("answered %s without an error text", got)
		}
		if gotConstraint != o.constraint {
			return fmt.Errorf("answered %s; want %s", got, want)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			return fmt.Errorf("error answer has Content-Type %q; want application/json", ct)
		}
		if err := checkErrorExtras(e.Class, m, resp); err != nil {
			return err
		}
	} else if gotConstraint != "" {
		return fmt.Errorf("answered %s: a success with a constraint code", got)
	}
	for _, ptr := range sortedKeys(e.JSON) {
		if docErr != nil {
			return fmt.Errorf("json %s: the answer is not JSON", ptr)
		}
		want, err := vs.substituteRaw(e.JSON[ptr])
		if err != nil {
			return err
		}
		v, ok := resolve(doc, ptr)
		if err := match(want, v, ok, false); err != nil {
			return fmt.Errorf("json %s: %w", ptr, err)
		}
	}
	for _, name := range sortedKeys(e.Headers) {
		want, err := vs.substituteRaw(e.Headers[name])
		if err != nil {
			return err
		}
		vals, ok := resp.Header[http.CanonicalHeaderKey(name)]
		var v any
		if ok && len(vals) > 0 {
			v = vals[0]
		}
		if err := match(want, v, ok, false); err != nil {
			return fmt.Errorf("header %s: %w", name, err)
		}
	}
	for _, ex := range e.BodyExcludes {
		s, err := vs.interpolate(ex)
		if err != nil {
			return err
		}
		if s != "" && bytes.Contains(resp.Body, []byte(s)) {
			return fmt.Errorf("the answer contains %q, which it must not", s)
		}
	}
	if e.SameAsStep != nil {
		prev := answers[*e.SameAsStep]
		if prev.Status != resp.Status || !bytes.Equal(prev.Body, resp.Body) {
			return fmt.Errorf("answer %d differs from step %d's %d at byte %d: %s; step %d had %s; want byte-identical answers",
				resp.Status, *e.SameAsStep, prev.Status, firstDiff(resp.Body, prev.Body),
				around(resp.Body, firstDiff(resp.Body, prev.Body)), *e.SameAsStep, around(prev.Body, firstDiff(resp.Body, prev.Body)))
		}
	}
	return nil
}

// checkErrorExtras checks what some classes carry besides the constraint.
func checkErrorExtras(class string, m map[string]any, resp *Response) error {
	switch class {
	case "schema-violation":
		vs, ok := m["violations"].([]any)
		if !ok || len(vs) == 0 {
			return fmt.Errorf("schema_violation without violations")
		}
		for i, v := range vs {
			o, _ := v.(map[string]any)
			_, p := o["path"].(string)
			k, _ := o["keyword"].(string)
			msg, _ := o["message"].(string)
			if !p || k == "" || msg == "" {
				return fmt.Errorf("violation %d is not {path, keyword, message}: %s", i, show(v))
			}
		}
	case "rate-limited":
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n <= 0 {
			return fmt.Errorf("rate_limited with Retry-After %q; want a positive number of seconds", resp.Header.Get("Retry-After"))
		}
	case "purpose-required":
		// purposes lists the app's grant purposes that could serve the read.
		ps, _ := m["purposes"].([]any)
		if len(ps) == 0 {
			return fmt.Errorf("purpose_required with purposes %s; want the purposes to choose from", show(m["purposes"]))
		}
		for _, v := range ps {
			if s, _ := v.(string); s == "" {
				return fmt.Errorf("purpose_required with purposes %s; want strings", show(m["purposes"]))
			}
		}
	case "approval-required":
		// request_id names the pending request: the one the read filed, or
		// the one already open.
		if id, ok := m["request_id"]; ok {
			if s, _ := id.(string); !strings.HasPrefix(s, "req_") {
				return fmt.Errorf("approval_required with request_id %s", show(id))
			}
		}
	}
	return nil
}

// firstDiff returns the offset of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// around shows the bytes of b around offset i.
func around(b []byte, i int) string {
	lo, hi := max(i-40, 0), min(i+40, len(b))
	return strconv.Quote(string(b[lo:hi]))
}

// snippet is the start of an answer's body, for reports.
func snippet(b []byte) string {
	const max = 200
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// tokenPattern finds owner and service tokens in report text.
var tokenPattern = regexp.MustCompile(`\b(ctxs?_)[A-Za-z0-9_-]+`)

// redact removes secrets and tokens from report text.
func (r *runner) redact(s string) string {
	for _, sec := range r.secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return tokenPattern.ReplaceAllString(s, "${1}[redacted]")
}

// send sends one request of the runner's own (status, unlock) with the
// step timeout.
func (r *runner) send(ctx context.Context, req *Request) (*Response, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.StepTimeout)
	defer cancel()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	return r.target.Do(ctx, req)
}
