package webui

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/schema"
)

// Paths and names the console uses.
const (
	// Home is the console's address: its sign-in page. Everything else is
	// under Prefix; a signed-in browser's pages are under its session's
	// own path, /ui/s/<random>/, which is also its cookie's path. (The
	// local API refuses paths with a trailing slash, /ui/ included.)
	Home         = "/ui"
	Prefix       = "/ui/"
	sessionRoot  = "/ui/s/"
	signinPath   = "/ui/signin"
	cookieName   = "phc_console"
	preCookie    = "phc_console_signin"
	csrfField    = "csrf"
	linkLifetime = 2 * time.Minute
	// sessionLifetime bounds a console session; sessionIdle ends one
	// unused for that long (the vault's own idle lock may end it sooner).
	sessionLifetime = 12 * time.Hour
	sessionIdle     = 15 * time.Minute
	maxForm         = 1 << 20
	maxSessions     = 64
	maxLinks        = 16
	// maxCookies bounds how many cookies of the session's name a request
	// may carry that are compared with its session's.
	maxCookies = 16
)

// csp is the Content-Security-Policy of every console answer: no script at
// all, styles and images from the console only, no plugins, no <base>, no
// framing, forms posted only to the console.
const csp = "default-src 'none'; script-src 'none'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// session is one signed-in browser: the owner principal it acts as, the
// path its pages are under, its cookie's hash and the token its forms must
// carry.
type session struct {
	p       custodian.Principal
	base    string   // "/ui/s/" and the session's random path name
	cookie  [32]byte // SHA-256 of the cookie's value
	csrf    string
	expires time.Time
	// idleUntil is when the session ends unless used again.
	idleUntil time.Time
	flash     string // a message for the next page, then cleared
}

// link is a one-time sign-in link minted for an owner session.
type link struct {
	p       custodian.Principal
	expires time.Time
}

// Server serves the console. It implements http.Handler for paths under
// /ui/; the daemon mounts it behind the local API's request checks.
type Server struct {
	svc   *custodian.Service
	log   *slog.Logger
	mux   *http.ServeMux
	pages map[string]*template.Template
	now   func() time.Time

	mu       sync.Mutex
	sessions map[[32]byte]*session // by the SHA-256 of the session's path name
	links    map[[32]byte]link     // by the link code's SHA-256

	validOnce sync.Once // compiles valid, for the validate page
	valid     *schema.Validator
	validErr  error
}

// New returns the console for svc. log receives error details; nil
// discards. clock tells the time (the service's own); nil is the system
// clock.
func New(svc *custodian.Service, log *slog.Logger, clock custodian.Clock) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := time.Now
	if clock != nil {
		now = clock.Now
	}
	s := &Server{svc: svc, log: log, mux: http.NewServeMux(), pages: parseTemplates(), now: now,
		sessions: map[[32]byte]*session{}, links: map[[32]byte]link{}}
	s.routes()
	return s
}

// handler serves one console page or action for a signed-in owner and
// returns an error instead of writing one.
type handler func(w http.ResponseWriter, r *http.Request, sess *session) error

func (s *Server) routes() {
	s.mux.Handle("GET /ui/assets/", http.StripPrefix("/ui/assets/", http.FileServerFS(assets())))
	// The sign-in page is at /ui (and /ui/signin): without a session's path
	// nothing leads any further, so that the path is never shown to anyone
	// who has not signed in.
	s.mux.HandleFunc("GET /ui", s.signinPage)
	s.mux.HandleFunc("GET /ui/signin", s.signinPage)
	s.mux.HandleFunc("POST /ui/signin", s.signin)
	s.mux.HandleFunc("GET /ui/login", s.login)
	s.mux.HandleFunc("POST /ui/link", s.mintLink)
	s.mux.Handle("GET /ui/s/{sid}", s.wrap(func(w http.ResponseWriter, r *http.Request, sess *session) error {
		http.Redirect(w, r, sess.base+"/review", http.StatusSeeOther)
		return nil
	}))
	for pattern, h := range map[string]handler{
		"POST /lock":                   s.lock,
		"GET /review":                  s.review,
		"POST /review/confirm":         s.confirm,
		"POST /review/reject":          s.reject,
		"GET /requests":                s.requests,
		"POST /requests/{id}/approve":  s.approveRequest,
		"POST /requests/{id}/deny":     s.denyRequest,
		"POST /apps/{name}/approve":    s.approveApp,
		"POST /apps/{name}/remove":     s.removeApp,
		"GET /grants":                  s.grants,
		"POST /grants":                 s.createGrant,
		"POST /grants/{id}/revoke":     s.revokeGrant,
		"POST /grants/{id}/narrow":     s.narrowGrant,
		"GET /claims":                  s.claims,
		"GET /claims/{id}":             s.claim,
		"POST /claims/{id}/correct":    s.correct,
		"POST /claims/{id}/personas":   s.setPersonas,
		"POST /claims/{id}/delete":     s.deleteClaim,
		"POST /claims/{id}/dispute":    s.disputeClaim,
		"POST /claims/{id}/undispute":  s.undisputeClaim,
		"POST /claims/{id}/retract":    s.retractClaim,
		"GET /personas":                s.personas,
		"POST /personas":               s.createPersona,
		"POST /personas/{id}":          s.updatePersona,
		"POST /personas/{id}/delete":   s.deletePersona,
		"GET /summaries":               s.summaries,
		"GET /summaries/{id}":          s.summary,
		"GET /graph":                   s.graphPage,
		"GET /receipts":                s.receipts,
		"GET /quarantine":              s.quarantine,
		"POST /quarantine/{id}/adopt":  s.adopt,
		"POST /quarantine/adopt":       s.adoptMany,
		"POST /quarantine/reject":      s.rejectMany,
		"POST /quarantine/{id}/reject": s.rejectHeld,
		"GET /settings":                s.settings,
		"POST /settings":               s.saveSettings,
		"GET /validate":                s.validatePage,
		"POST /validate":               s.validate,
	} {
		method, path, _ := strings.Cut(pattern, " ")
		s.mux.Handle(method+" "+sessionRoot+"{sid}"+path, s.wrap(h))
	}
}

// ServeHTTP sets the console's security headers and routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	s.mux.ServeHTTP(w, r)
}

// wrap finds the request's session (else sends the browser to sign in,
// which never sends it back: no redirect loop, whatever cookies it has),
// checks the CSRF token of a state-changing request, runs h and renders
// its error.
func (s *Server) wrap(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess := s.session(r)
		if sess == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, signinPath, http.StatusSeeOther)
				return
			}
			s.fail(w, r, nil, &custodian.Error{Op: "console", Kind: custodian.KindUnauthenticated})
			return
		}
		if r.Method != http.MethodGet {
			parse := r.ParseForm
			if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
				// A body is at most maxForm: every part stays in memory, none
				// goes to a temporary file.
				parse = func() error { return r.ParseMultipartForm(maxForm + 1) }
			}
			if err := parse(); err != nil {
				s.fail(w, r, sess, formError(err))
				return
			}
			if !equalSecret(r.PostForm.Get(csrfField), sess.csrf) {
				s.fail(w, r, sess, &custodian.Error{Op: "console", Kind: custodian.KindInvalid, Public: "the form's CSRF token is missing or wrong; reload the page"})
				return
			}
		}
		if err := h(w, r, sess); err != nil {
			s.fail(w, r, sess, err)
		}
	})
}

func formError(err error) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &custodian.Error{Op: "console", Kind: custodian.KindTooLarge, Err: err}
	}
	return &custodian.Error{Op: "console", Kind: custodian.KindInvalid, Public: "malformed form", Err: err}
}

// fail renders err as the error table says. A session the vault has ended
// (by a lock) is forgotten and the browser sent to sign in.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, sess *session, err error) {
	if sess != nil && !s.svc.SessionOpen(sess.p) {
		s.forget(sess)
		http.SetCookie(w, clearCookie(cookieName, sess.base))
		http.Redirect(w, r, signinPath, http.StatusSeeOther)
		return
	}
	d := custodian.Describe(err)
	if d.Status >= 500 {
		s.log.Error("console request failed", "method", r.Method, "route", r.Pattern, "err", err)
	} else {
		s.log.Debug("console request refused", "method", r.Method, "route", r.Pattern, "constraint", d.Constraint, "err", err)
	}
	s.render(w, d.Status, "error", sess, map[string]any{"Error": d.Error, "Constraint": d.Constraint, "Status": d.Status, "Violations": d.Violations})
}

// page is what every page template receives. Base is the signed-in
// session's path, which every link and form of its pages starts with.
type page struct {
	Base     string
	CSRF     string
	Flash    string
	SignedIn bool
	Nav      string
	Data     any
}

// render writes the page template name with data.
func (s *Server) render(w http.ResponseWriter, status int, name string, sess *session, data any) {
	pg := page{Nav: name, Data: data}
	if sess != nil {
		s.mu.Lock()
		pg.Base, pg.CSRF, pg.Flash, pg.SignedIn = sess.base, sess.csrf, sess.flash, true
		sess.flash = ""
		s.mu.Unlock()
	}
	var buf bytes.Buffer
	if err := s.pages[name].Execute(&buf, pg); err != nil {
		s.log.Error("console template failed", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(showBidi(buf.Bytes()))
}

// done sets a message for the next page and sends the browser to it: to
// is the page's path under the session's (as "/review").
func (s *Server) done(w http.ResponseWriter, r *http.Request, sess *session, to, msg string) error {
	s.mu.Lock()
	sess.flash = msg
	s.mu.Unlock()
	http.Redirect(w, r, sess.base+to, http.StatusSeeOther)
	return nil
}

// session returns the request's live session, or nil: the session whose
// path the request names, if one of the request's cookies is that
// session's. Every cookie of the name counts, not only the first: another
// server on this host may have set its own (browsers share cookies across
// ports), with a more specific path that the browser sends first; such a
// cookie is ignored, never taken for a session.
func (s *Server) session(r *http.Request) *session {
	sid := r.PathValue("sid")
	if sid == "" {
		return nil
	}
	var values [][32]byte
	for _, c := range r.CookiesNamed(cookieName) {
		if c.Value != "" && len(values) < maxCookies {
			values = append(values, sha256.Sum256([]byte(c.Value)))
		}
	}
	if len(values) == 0 {
		return nil
	}
	h := sha256.Sum256([]byte(sid))
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[h]
	if sess == nil {
		return nil
	}
	var match int
	for _, v := range values {
		match |= subtle.ConstantTimeCompare(v[:], sess.cookie[:])
	}
	if match != 1 {
		return nil
	}
	now := s.now()
	if now.After(sess.expires) || now.After(sess.idleUntil) || !s.svc.SessionOpen(sess.p) {
		delete(s.sessions, h)
		return nil
	}
	sess.idleUntil = now.Add(sessionIdle)
	return sess
}

// forget ends sess.
func (s *Server) forget(sess *session) {
	s.mu.Lock()
	for h, x := range s.sessions {
		if x == sess {
			delete(s.sessions, h)
		}
	}
	s.mu.Unlock()
}

// start opens a console session for owner principal p under a new random
// path, sets its cookie for that path only and returns the path. Another
// server on this host never receives the cookie, since the browser sends
// it only to that path, which nobody else knows; and a cookie another
// server sets is never the session's, which only this one is.
func (s *Server) start(w http.ResponseWriter, p custodian.Principal) (string, error) {
	var secrets [3]string
	for i := range secrets {
		t, err := randomToken()
		if err != nil {
			return "", err
		}
		secrets[i] = t
	}
	sid, value, csrf := secrets[0], secrets[1], secrets[2]
	now := s.now()
	s.mu.Lock()
	for h, old := range s.sessions {
		if now.After(old.expires) || !s.svc.SessionOpen(old.p) {
			delete(s.sessions, h)
		}
	}
	if len(s.sessions) >= maxSessions {
		s.mu.Unlock()
		return "", &custodian.Error{Op: "console", Kind: custodian.KindRateLimited, Public: "too many console sessions; lock the vault to end them"}
	}
	base := sessionRoot + sid
	s.sessions[sha256.Sum256([]byte(sid))] = &session{p: p, base: base, cookie: sha256.Sum256([]byte(value)), csrf: csrf,
		expires: now.Add(sessionLifetime), idleUntil: now.Add(sessionIdle)}
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: value, Path: base, HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: int(sessionLifetime.Seconds())})
	return base, nil
}

func clearCookie(name, path string) *http.Cookie {
	return &http.Cookie{Name: name, Value: "", Path: path, HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1}
}

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// equalSecret compares a presented secret with the expected one in
// constant time; an empty one never matches.
func equalSecret(got, want string) bool {
	if got == "" || want == "" {
		return false
	}
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// signinPage offers the unlock, with a pre-session token against login
// CSRF (a cookie and a form field that must agree). It never redirects:
// the browser does not send a session's cookie here, and the page shows
// no session's path.
func (s *Server) signinPage(w http.ResponseWriter, r *http.Request) {
	s.showSignin(w, http.StatusOK, "")
}

func (s *Server) showSignin(w http.ResponseWriter, status int, msg string) {
	tok, err := randomToken()
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: preCookie, Value: tok, Path: signinPath, HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	s.render(w, status, "signin", nil, map[string]any{"Token": tok, "Locked": s.svc.Locked(), "Error": msg})
}

// signin unlocks the vault with the password and Secret Key and opens a
// console session on the new owner session.
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.showSignin(w, http.StatusBadRequest, custodian.Describe(formError(err)).Error)
		return
	}
	// Any cookie of the name may be the one this daemon set; one that
	// another server planted (sent first) must not make signing in fail.
	var ok bool
	for _, c := range r.CookiesNamed(preCookie) {
		ok = equalSecret(r.PostForm.Get(csrfField), c.Value) || ok
	}
	if !ok {
		s.showSignin(w, http.StatusForbidden, "the sign-in form expired; try again")
		return
	}
	pw := r.PostForm.Get("password")
	ctx := custodian.WithPeer(r.Context(), r.RemoteAddr) // failures are limited per peer
	token, err := s.svc.Unlock(ctx, []byte(pw), strings.TrimSpace(r.PostForm.Get("secret_key")))
	if err != nil {
		d := custodian.Describe(err)
		msg := d.Error
		if custodian.KindOf(err) == custodian.KindConflict {
			msg = "the vault is already unlocked: run phc ui to open the console with its session, or lock it first"
		}
		s.showSignin(w, d.Status, msg)
		return
	}
	p, err := s.svc.AuthenticateOn(r.Context(), custodian.ChannelHTTP, token)
	var base string
	if err == nil {
		base, err = s.start(w, p)
	}
	if err != nil {
		s.showSignin(w, custodian.Describe(err).Status, custodian.Describe(err).Error)
		return
	}
	http.SetCookie(w, clearCookie(preCookie, signinPath))
	http.Redirect(w, r, base+"/review", http.StatusSeeOther)
}

// mintLink answers an owner's bearer request (phc ui) with a one-time
// sign-in link bound to that session, valid for two minutes.
func (s *Server) mintLink(w http.ResponseWriter, r *http.Request) {
	fail := func(err error) {
		d := custodian.Describe(err)
		writeJSON(w, d.Status, d)
	}
	scheme, bearer, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || bearer == "" {
		fail(&custodian.Error{Op: "console.link", Kind: custodian.KindUnauthenticated})
		return
	}
	p, err := s.svc.AuthenticateOn(r.Context(), custodian.ChannelHTTP, strings.TrimSpace(bearer))
	if err == nil && !p.IsOwner() {
		err = &custodian.Error{Op: "console.link", Kind: custodian.KindSessionRequired}
	}
	if err != nil {
		fail(err)
		return
	}
	code, err := randomToken()
	if err != nil {
		fail(&custodian.Error{Op: "console.link", Kind: custodian.KindInternal, Err: err})
		return
	}
	now := s.now()
	s.mu.Lock()
	for h, l := range s.links {
		if now.After(l.expires) {
			delete(s.links, h)
		}
	}
	if len(s.links) >= maxLinks {
		s.mu.Unlock()
		fail(&custodian.Error{Op: "console.link", Kind: custodian.KindRateLimited, RetryAfter: linkLifetime})
		return
	}
	s.links[sha256.Sum256([]byte(code))] = link{p: p, expires: now.Add(linkLifetime)}
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]string{"path": "/ui/login?code=" + code})
}

// login spends a one-time link: it opens a console session on the
// session that minted it and sends the browser on, out of the link's URL.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	h := sha256.Sum256([]byte(code))
	s.mu.Lock()
	l, ok := s.links[h]
	delete(s.links, h)
	s.mu.Unlock()
	if !ok || code == "" || s.now().After(l.expires) || !s.svc.SessionOpen(l.p) {
		s.showSignin(w, http.StatusUnauthorized, "this sign-in link is used, expired or unknown: run phc ui again")
		return
	}
	base, err := s.start(w, l.p)
	if err != nil {
		s.showSignin(w, custodian.Describe(err).Status, custodian.Describe(err).Error)
		return
	}
	http.Redirect(w, r, base+"/review", http.StatusSeeOther)
}

// lock locks the vault, which ends every session, the console's included.
func (s *Server) lock(w http.ResponseWriter, r *http.Request, sess *session) error {
	if err := s.svc.Lock(r.Context(), sess.p); err != nil {
		return err
	}
	s.mu.Lock()
	clear(s.sessions)
	s.mu.Unlock()
	http.SetCookie(w, clearCookie(cookieName, sess.base))
	http.Redirect(w, r, signinPath, http.StatusSeeOther)
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	raw, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(raw, '\n'))
}

// ctx is the request's context (a short name for the handlers).
func ctx(r *http.Request) context.Context { return r.Context() }
