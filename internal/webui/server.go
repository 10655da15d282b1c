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
)

// Paths and names the console uses.
const (
	// Home is the console's address; its pages are under Prefix. (The
	// local API refuses paths with a trailing slash, /ui/ included.)
	Home         = "/ui"
	Prefix       = "/ui/"
	cookieName   = "phc_console"
	preCookie    = "phc_console_signin"
	csrfField    = "csrf"
	linkLifetime = 2 * time.Minute
	// sessionLifetime bounds a console session; sessionIdle ends one
	// unused for that long (the vault's own idle lock may end it sooner).
	// Short, because browsers send a cookie to every port of the host: a
	// cookie that another server on this machine obtains is worth little
	// for long.
	sessionLifetime = 12 * time.Hour
	sessionIdle     = 15 * time.Minute
	maxForm         = 1 << 20
	maxSessions     = 64
	maxLinks        = 16
)

// csp is the Content-Security-Policy of every console answer: no script at
// all, styles and images from the console only, no plugins, no <base>, no
// framing, forms posted only to the console.
const csp = "default-src 'none'; script-src 'none'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// session is one signed-in browser: the owner principal it acts as and
// the token its forms must carry.
type session struct {
	p       custodian.Principal
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
	sessions map[[32]byte]*session // by the cookie's SHA-256
	links    map[[32]byte]link     // by the link code's SHA-256
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
	s.mux.HandleFunc("GET /ui/signin", s.signinPage)
	s.mux.HandleFunc("POST /ui/signin", s.signin)
	s.mux.HandleFunc("GET /ui/login", s.login)
	s.mux.HandleFunc("POST /ui/link", s.mintLink)
	s.mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/review", http.StatusSeeOther)
	})
	for pattern, h := range map[string]handler{
		"POST /ui/lock":                   s.lock,
		"GET /ui/review":                  s.review,
		"POST /ui/review/confirm":         s.confirm,
		"POST /ui/review/reject":          s.reject,
		"GET /ui/requests":                s.requests,
		"POST /ui/requests/{id}/approve":  s.approveRequest,
		"POST /ui/requests/{id}/deny":     s.denyRequest,
		"POST /ui/apps/{name}/approve":    s.approveApp,
		"POST /ui/apps/{name}/remove":     s.removeApp,
		"GET /ui/grants":                  s.grants,
		"POST /ui/grants":                 s.createGrant,
		"POST /ui/grants/{id}/revoke":     s.revokeGrant,
		"POST /ui/grants/{id}/narrow":     s.narrowGrant,
		"GET /ui/claims":                  s.claims,
		"GET /ui/claims/{id}":             s.claim,
		"POST /ui/claims/{id}/correct":    s.correct,
		"POST /ui/claims/{id}/personas":   s.setPersonas,
		"POST /ui/claims/{id}/delete":     s.deleteClaim,
		"POST /ui/claims/{id}/dispute":    s.disputeClaim,
		"POST /ui/claims/{id}/undispute":  s.undisputeClaim,
		"POST /ui/claims/{id}/retract":    s.retractClaim,
		"GET /ui/personas":                s.personas,
		"POST /ui/personas":               s.createPersona,
		"POST /ui/personas/{id}":          s.updatePersona,
		"POST /ui/personas/{id}/delete":   s.deletePersona,
		"GET /ui/summaries":               s.summaries,
		"GET /ui/summaries/{id}":          s.summary,
		"GET /ui/graph":                   s.graphPage,
		"GET /ui/receipts":                s.receipts,
		"GET /ui/quarantine":              s.quarantine,
		"POST /ui/quarantine/{id}/adopt":  s.adopt,
		"POST /ui/quarantine/{id}/reject": s.rejectHeld,
	} {
		s.mux.Handle(pattern, s.wrap(h))
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

// wrap finds the request's session (else sends the browser to sign in),
// checks the CSRF token of a state-changing request, runs h and renders
// its error.
func (s *Server) wrap(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess := s.session(r)
		if sess == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
				return
			}
			s.fail(w, r, nil, &custodian.Error{Op: "console", Kind: custodian.KindUnauthenticated})
			return
		}
		if r.Method != http.MethodGet {
			if err := r.ParseForm(); err != nil {
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
		s.forget(r)
		http.SetCookie(w, clearCookie(cookieName))
		http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
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

// page is what every page template receives.
type page struct {
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
		pg.CSRF, pg.Flash, pg.SignedIn = sess.csrf, sess.flash, true
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
	w.Write(buf.Bytes())
}

// done sets a message for the next page and sends the browser to it.
func (s *Server) done(w http.ResponseWriter, r *http.Request, sess *session, to, msg string) error {
	s.mu.Lock()
	sess.flash = msg
	s.mu.Unlock()
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// session returns the request's live session, or nil.
func (s *Server) session(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil
	}
	h := sha256.Sum256([]byte(c.Value))
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[h]
	if sess == nil {
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

func (s *Server) forget(r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		h := sha256.Sum256([]byte(c.Value))
		s.mu.Lock()
		delete(s.sessions, h)
		s.mu.Unlock()
	}
}

// start opens a console session for owner principal p and sets its cookie.
func (s *Server) start(w http.ResponseWriter, p custodian.Principal) error {
	value, err := randomToken()
	if err != nil {
		return err
	}
	csrf, err := randomToken()
	if err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	for h, old := range s.sessions {
		if now.After(old.expires) || !s.svc.SessionOpen(old.p) {
			delete(s.sessions, h)
		}
	}
	if len(s.sessions) >= maxSessions {
		s.mu.Unlock()
		return &custodian.Error{Op: "console", Kind: custodian.KindRateLimited, Public: "too many console sessions; lock the vault to end them"}
	}
	s.sessions[sha256.Sum256([]byte(value))] = &session{p: p, csrf: csrf, expires: now.Add(sessionLifetime), idleUntil: now.Add(sessionIdle)}
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: value, Path: "/ui", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: int(sessionLifetime.Seconds())})
	return nil
}

func clearCookie(name string) *http.Cookie {
	return &http.Cookie{Name: name, Value: "", Path: "/ui", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1}
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
// CSRF (a cookie and a form field that must agree).
func (s *Server) signinPage(w http.ResponseWriter, r *http.Request) {
	if sess := s.session(r); sess != nil {
		http.Redirect(w, r, "/ui/review", http.StatusSeeOther)
		return
	}
	s.showSignin(w, http.StatusOK, "")
}

func (s *Server) showSignin(w http.ResponseWriter, status int, msg string) {
	tok, err := randomToken()
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: preCookie, Value: tok, Path: "/ui", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	s.render(w, status, "signin", nil, map[string]any{"Token": tok, "Locked": s.svc.Locked(), "Error": msg})
}

// signin unlocks the vault with the password and Secret Key and opens a
// console session on the new owner session.
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.showSignin(w, http.StatusBadRequest, custodian.Describe(formError(err)).Error)
		return
	}
	c, err := r.Cookie(preCookie)
	if err != nil || !equalSecret(r.PostForm.Get(csrfField), c.Value) {
		s.showSignin(w, http.StatusForbidden, "the sign-in form expired; try again")
		return
	}
	pw := r.PostForm.Get("password")
	token, err := s.svc.Unlock(r.Context(), []byte(pw), strings.TrimSpace(r.PostForm.Get("secret_key")))
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
	if err == nil {
		err = s.start(w, p)
	}
	if err != nil {
		s.showSignin(w, custodian.Describe(err).Status, custodian.Describe(err).Error)
		return
	}
	http.SetCookie(w, clearCookie(preCookie))
	http.Redirect(w, r, "/ui/review", http.StatusSeeOther)
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
	if err := s.start(w, l.p); err != nil {
		s.showSignin(w, custodian.Describe(err).Status, custodian.Describe(err).Error)
		return
	}
	http.Redirect(w, r, "/ui/review", http.StatusSeeOther)
}

// lock locks the vault, which ends every session, the console's included.
func (s *Server) lock(w http.ResponseWriter, r *http.Request, sess *session) error {
	if err := s.svc.Lock(r.Context(), sess.p); err != nil {
		return err
	}
	s.mu.Lock()
	clear(s.sessions)
	s.mu.Unlock()
	http.SetCookie(w, clearCookie(cookieName))
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
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
