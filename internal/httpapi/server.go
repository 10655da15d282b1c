package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/phc-project/phc/custodian"
)

// MaxBody bounds every request body but an import's; MaxImport bounds that.
const (
	MaxBody   = 1 << 20
	MaxImport = 64 << 20
	// MaxBundle bounds a migration bundle (POST /phc/v1/import).
	MaxBundle = 256 << 20
	// MaxExport bounds another memory system's export (POST
	// /phc/v1/import?from=…), which is streamed, never held.
	MaxExport = 1 << 30
	// MaxParts bounds a bundle in parts (POST /phc/v1/import?parts=zip),
	// which is streamed, never held.
	MaxParts = 64 << 30
)

// access is the credential a route needs before the core is called; the
// core enforces the rules again with the resolved principal.
type access uint8

const (
	public   access = iota // no credential (status, unlock, token minting)
	owner                  // the owner's session token
	anyToken               // any valid token; the core decides what it may do
)

// handler serves one route with the resolved principal and returns an error
// instead of writing one.
type handler func(w http.ResponseWriter, r *http.Request, p custodian.Principal) error

type route struct {
	pattern string
	access  access
	h       handler
}

// bodyLimits raises the body bound of the routes that take large bodies.
var bodyLimits = map[string]int64{"POST /context/import": MaxImport, "POST /phc/v1/import": MaxParts, "POST /phc/v1/dec/verify": 5 << 20, "POST /phc/v1/dec/present": 5 << 20}

// Server is the HTTP face of a custodian.Service. It implements
// http.Handler.
type Server struct {
	svc    *custodian.Service
	log    *slog.Logger
	mux    *http.ServeMux
	mounts []string // the patterns Mount added, in order
}

// New returns a Server for svc. log receives error details; nil discards.
func New(svc *custodian.Service, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{svc: svc, log: log, mux: http.NewServeMux()}
	for _, rt := range s.routes() {
		s.mux.Handle(rt.pattern, s.wrap(rt))
	}
	s.mux.Handle("/", s.wrap(route{access: public, h: s.noRoute}))
	return s
}

// Mount serves h at pattern (MCP's /mcp, say) behind the same local-API
// hygiene checks as every route; h does its own authentication.
func (s *Server) Mount(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	s.mounts = append(s.mounts, pattern)
}

// Routes lists every pattern s serves ("METHOD /path", or "/path" for a
// mounted handler that takes every method): the route table, then what
// Mount added. docs/openapi.yaml is checked against it.
func (s *Server) Routes() []string {
	var out []string
	for _, rt := range s.routes() {
		out = append(out, rt.pattern)
	}
	return append(out, s.mounts...)
}

// noRoute answers a request no route matched: 405 when the path is served
// under another method, else 404.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request, _ custodian.Principal) error {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			return &custodian.Error{Op: "route", Kind: custodian.KindMethodNotAllowed}
		}
	}
	return &custodian.Error{Op: "route", Kind: custodian.KindNotFound}
}

// routes is the route table: every route with the credential it needs.
func (s *Server) routes() []route {
	return []route{
		{"GET /context/status", public, s.status},
		{"POST /context/unlock", public, s.unlock},
		{"POST /context/lock", owner, s.lock},
		{"POST /context/tokens/service", public, s.mintToken},
		{"GET /context/tokens/service", owner, s.listTokens},
		{"DELETE /context/tokens/service/{prefix}", owner, s.revokeToken},
		{"POST /context/consumers/register", public, s.registerConsumer},
		{"GET /context/consumers", owner, s.listConsumers},
		{"GET /context/audit", owner, s.audit},
		{"GET /context/fields", anyToken, s.listFields},
		{"GET /context/fields/{id}", anyToken, s.getField},
		{"PUT /context/fields/{id}", anyToken, s.putField},
		{"DELETE /context/fields/{id}", owner, s.deleteField},
		{"GET /context/fields/category/{name}", anyToken, s.fieldsInCategory},
		{"GET /context/context", anyToken, s.fieldContext},
		{"PUT /context/sensitivity/{id}", owner, s.setSensitivity},
		{"GET /context/export", owner, s.export},
		{"POST /context/import", owner, s.importArchive},
		{"POST /context/requests", anyToken, s.requestContext},
		{"GET /context/requests/{id}", anyToken, s.pollRequest},
		{"GET /context/requests", owner, s.listRequests},
		{"POST /context/requests/{id}/approve", owner, s.approveRequest},
		{"POST /context/requests/{id}/deny", owner, s.denyRequest},
		{"DELETE /context/consumers/{name}", owner, s.deleteConsumer},

		{"POST /phc/v1/consumers", owner, s.addConsumer},
		{"GET /phc/v1/consumers", owner, s.listConsumers},
		{"POST /phc/v1/consumers/{name}/approve", owner, s.approveConsumer},
		{"POST /phc/v1/personas", owner, s.createPersona},
		{"GET /phc/v1/personas", owner, s.listPersonas},
		{"PUT /phc/v1/personas/{id}", owner, s.updatePersona},
		{"DELETE /phc/v1/personas/{id}", owner, s.deletePersona},
		{"POST /phc/v1/grants", owner, s.createGrant},
		{"GET /phc/v1/grants", owner, s.listGrants},
		{"DELETE /phc/v1/grants/{id}", owner, s.revokeGrant},
		{"POST /phc/v1/grants/{id}/narrow", owner, s.narrowGrant},

		{"POST /phc/v1/proposals", anyToken, s.propose},
		{"GET /phc/v1/proposals/{id}", anyToken, s.ownProposals},
		{"POST /phc/v1/proposals/{id}/withdraw", anyToken, s.withdrawProposal},
		{"GET /context/search", anyToken, s.search},
		{"GET /phc/v1/review", owner, s.review},
		{"POST /phc/v1/proposals/{id}/confirm", owner, s.confirm},
		{"POST /phc/v1/proposals/{id}/reject", owner, s.reject},
		{"POST /phc/v1/review/confirm", owner, s.confirmBulk},
		{"POST /phc/v1/review/reject", owner, s.rejectBulk},

		{"GET /phc/v1/claims", owner, s.listClaims},
		{"GET /phc/v1/claims/{id}", anyToken, s.getClaim},
		{"GET /phc/v1/claims/{id}/versions", owner, s.versions},
		{"PUT /phc/v1/claims/{id}", owner, s.correct},
		{"DELETE /phc/v1/claims/{id}", owner, s.deleteClaim},
		{"POST /phc/v1/claims/{id}/personas", owner, s.setPersonas},
		{"POST /phc/v1/claims/{id}/dispute", owner, s.disputeClaim},
		{"DELETE /phc/v1/claims/{id}/dispute", owner, s.withdrawDispute},
		{"POST /phc/v1/claims/{id}/retract", owner, s.retractClaim},

		{"GET /phc/v1/context", anyToken, s.context},
		{"GET /phc/v1/receipts", owner, s.receipts},
		{"GET /phc/v1/receipts/verify", owner, s.verifyReceipts},
		{"POST /phc/v1/entities", owner, s.createEntity},
		{"GET /phc/v1/entities", owner, s.listEntities},
		{"POST /phc/v1/summaries", anyToken, s.createSummary},
		{"GET /phc/v1/summaries", owner, s.listSummaries},
		{"GET /phc/v1/summaries/{id}", anyToken, s.getSummary},
		{"GET /phc/v1/graph/neighbors/{node}", anyToken, s.neighbors},
		{"GET /phc/v1/graph/export", owner, s.exportGraph},
		{"POST /phc/v1/graph/rebuild", owner, s.rebuildGraph},
		{"GET /phc/v1/check", owner, s.check},
		{"POST /phc/v1/token", public, s.exchangeToken},
		{"GET /phc/v1/card", owner, s.ownCard},
		{"POST /phc/v1/custodians", owner, s.pinCustodian},
		{"GET /phc/v1/custodians", owner, s.listCustodians},
		{"DELETE /phc/v1/custodians/{id}", owner, s.unpinCustodian},
		{"POST /phc/v1/export", owner, s.exportBundle},
		{"POST /phc/v1/import", owner, s.importBundle},
		{"GET /phc/v1/quarantine", owner, s.listQuarantine},
		{"POST /phc/v1/quarantine/{id}/reject", owner, s.rejectQuarantined},
		{"POST /phc/v1/quarantine/reject", owner, s.rejectQuarantinedBulk},
		{"POST /phc/v1/quarantine/{id}/adopt", owner, s.adoptQuarantined},
		{"POST /phc/v1/quarantine/adopt", owner, s.adoptQuarantined},
		{"POST /phc/v1/quarantine/{id}/unblock", owner, s.unblockQuarantined},
		{"POST /phc/v1/trust", owner, s.addTrust},
		{"GET /phc/v1/trust", owner, s.listTrust},
		{"DELETE /phc/v1/trust/{id}", owner, s.removeTrust},
		{"POST /phc/v1/dec/trust", owner, s.pinDECIssuer},
		{"GET /phc/v1/dec/trust", owner, s.listDECTrust},
		{"POST /phc/v1/dec/policies", owner, s.addDECPolicy},
		{"POST /phc/v1/dec/verify", owner, s.verifyDEC},
		{"POST /phc/v1/dec/present", anyToken, s.presentDEC},
		{"GET /phc/v1/dec/presentations", owner, s.listDECPresentations},
		{"POST /phc/v1/dec/trust/unrevoke", owner, s.unrevokeDECKey},
		{"GET /phc/v1/settings", owner, s.getSettings},
		{"PUT /phc/v1/settings", owner, s.putSettings},

		// Client-Vault v=1 (clientvault.go): the resolve endpoint takes K,
		// never a token, and checks it itself.
		{"POST /phc/v1/vault/resolve", public, s.resolve},
		{"GET /phc/v1/vault-keys", owner, s.listVaultKeys},
		{"POST /phc/v1/vault-keys/activate", owner, s.setVaultKey(custodian.VaultKeyActive)},
		{"POST /phc/v1/vault-keys/revoke", owner, s.setVaultKey(custodian.VaultKeyRevoked)},
	}
}

// ServeHTTP applies the local-API hygiene checks, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := checkRequest(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func badRequest(pub string) error {
	return &custodian.Error{Op: "http", Kind: custodian.KindInvalid, Public: pub}
}

// checkRequest refuses requests that did not come from a local,
// non-browser client: a Host that is not loopback (DNS rebinding), a
// foreign Origin or a cross-site fetch, and unclean paths.
func checkRequest(r *http.Request) error {
	if !loopbackHost(r.Host) {
		return badRequest("the Host header must name a loopback address")
	}
	// A browser names the page's origin: only a page served by this very
	// daemon (same host and port) may call it. Any other page, even one on
	// another loopback port, is refused.
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Scheme != "http" || !strings.EqualFold(u.Host, r.Host) {
			return badRequest("cross-origin requests are refused")
		}
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "none", "same-origin":
	default:
		return badRequest("cross-site requests are refused")
	}
	p := r.URL.Path
	if p == "" || p[0] != '/' || path.Clean(p) != p || strings.Contains(r.URL.RawPath, "%2F") || strings.Contains(r.URL.RawPath, "%2f") {
		return badRequest("malformed path")
	}
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
		return badRequest("malformed query")
	}
	return nil
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// wrap authenticates as the route requires, runs the handler and
// translates its error.
func (s *Server) wrap(rt route) http.Handler {
	limit := bodyLimits[rt.pattern]
	if limit == 0 {
		limit = MaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		// Failed credentials are limited per peer (custodian.WithPeer).
		r = r.WithContext(custodian.WithPeer(r.Context(), r.RemoteAddr))
		var p custodian.Principal
		if rt.access != public {
			bearer, ok := bearerToken(r)
			var err error
			if !ok {
				// A locked vault says so before asking for credentials.
				err = &custodian.Error{Op: "http", Kind: custodian.KindUnauthenticated}
				if s.svc.Locked() {
					err = &custodian.Error{Op: "http", Kind: custodian.KindLocked}
				}
			} else {
				p, err = s.svc.AuthenticateOn(r.Context(), custodian.ChannelHTTP, bearer)
			}
			if err == nil {
				// A read may ask for references in place of values
				// (docs/formats/reference.md).
				var d string
				if d, err = query(r, "disclosure"); err == nil {
					p, err = p.WithDisclosure(d)
				}
			}
			if err == nil && rt.access == owner && !p.IsOwner() {
				err = &custodian.Error{Op: "http", Kind: custodian.KindSessionRequired}
			}
			if err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		if err := rt.h(w, r, p); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// writeError writes err as the table says (custodian.Describe).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if _, domain := errors.AsType[*custodian.Error](err); !domain {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			err = &custodian.Error{Op: "read body", Kind: custodian.KindTooLarge, Err: err}
		}
	}
	body := custodian.Describe(err)
	if body.RetryAfter > 0 {
		secs := int((body.RetryAfter + 999_999_999) / 1_000_000_000)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	if body.Status >= 500 {
		s.log.Error("request failed", "method", r.Method, "route", r.Pattern, "err", err)
	} else {
		s.log.Debug("request refused", "method", r.Method, "route", r.Pattern, "constraint", body.Constraint, "err", err)
	}
	writeJSON(w, body.Status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var raw []byte
	var err error
	if m, ok := v.(json.Marshaler); ok {
		// The core's own encoders (a context of many cached claims) emit
		// valid, compact JSON: calling them directly spares encoding/json's
		// second pass over every byte.
		raw, err = m.MarshalJSON()
	} else {
		raw, err = json.Marshal(v)
	}
	if err != nil {
		status = http.StatusInternalServerError
		raw = []byte(`{"error":"internal error","constraint":"internal"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(raw)+1))
	w.WriteHeader(status)
	w.Write(raw)
	w.Write([]byte{'\n'})
}

// readBody reads the bounded request body.
func readBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, &custodian.Error{Op: "http", Kind: custodian.KindTooLarge, Err: err}
		}
		return nil, &custodian.Error{Op: "http", Kind: custodian.KindInvalid, Public: "could not read the request body", Err: err}
	}
	return raw, nil
}

// body reads the request body and decodes it into in (Service.Decode). A
// body that cannot be read is an error here; one that does not decode is
// not: in keeps the refusal, and the core method it is given to answers
// it after its own checks of the caller (mode, rate limits), as it always
// has.
func (s *Server) body(r *http.Request, op string, in custodian.Input) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	_ = s.svc.Decode(op, raw, in) // answered by the method given in
	return nil
}

// query returns the single value of a query parameter; a repeated
// parameter is an error.
func query(r *http.Request, name string) (string, error) {
	vs := r.URL.Query()[name]
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
		return vs[0], nil
	}
	return "", badRequest("a query parameter is repeated")
}

func queryUint(r *http.Request, name string) (uint64, error) {
	v, err := query(r, name)
	if err != nil || v == "" {
		return 0, err
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badRequest("a numeric query parameter is malformed")
	}
	return n, nil
}
