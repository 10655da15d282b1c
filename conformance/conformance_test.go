package conformance_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/phc-project/phc/conformance"
	"github.com/phc-project/phc/conformance/conformancetest"
	"github.com/phc-project/phc/custodian"
	wire "github.com/phc-project/phc/internal/daemon"
	"github.com/phc-project/phc/internal/vault"
)

const testPassword = "conformance password, not a secret"

// daemon is an in-process custodian served over real HTTP on a loopback
// port, wired by the function phc serve uses (daemon.Open).
type daemon struct {
	url       string
	owner     string
	secretKey string
	dir       string
}

func startDaemon(t *testing.T) *daemon {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "phc")
	sk, err := vault.Create(dir, []byte(testPassword))
	if err != nil {
		t.Fatalf("vault.Create: %v", err)
	}
	core, err := wire.Open(wire.Options{Dir: dir, IdleLock: -1})
	if err != nil {
		t.Fatalf("daemon.Open: %v", err)
	}
	owner, err := core.Svc.Unlock(context.Background(), []byte(testPassword), sk)
	if err != nil {
		t.Fatalf("unlock: %v", err)
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = core.Handler("http://" + srv.Listener.Addr().String())
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		if err := core.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &daemon{url: srv.URL, owner: owner, secretKey: sk, dir: dir}
}

func (d *daemon) target(t *testing.T) conformance.Target {
	t.Helper()
	tg, err := conformance.NewHTTPTarget(d.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestConformance runs every case against a fresh daemon over HTTP.
func TestConformance(t *testing.T) {
	d := startDaemon(t)
	conformancetest.RunT(t, d.target(t), conformance.Config{
		OwnerToken: d.owner, Password: testPassword, SecretKey: d.secretKey,
		// The daemon is thrown away: no need to wait out the unlock rate
		// limit that the last lockable case leaves behind.
		LeaveLocked: true,
	})
}

// TestConformanceMCP runs every case against a fresh daemon with the
// MCP face in front: each request an app makes that a tool carries goes
// over MCP (the Go SDK's client, streamable HTTP) and must meet the same
// expectation as over HTTP.
func TestConformanceMCP(t *testing.T) {
	d := startDaemon(t)
	tg := conformance.NewMCPTarget(d.target(t), d.url+"/mcp")
	t.Cleanup(func() { tg.Close() })
	conformancetest.RunT(t, tg, conformance.Config{
		OwnerToken: d.owner, Password: testPassword, SecretKey: d.secretKey, LeaveLocked: true,
	})
	if n := tg.Carried(); n < 150 {
		t.Errorf("only %d requests went over MCP; the MCP face is hardly tested", n)
	} else {
		t.Logf("%d requests went over MCP", n)
	}
}

// TestCaseIDs checks that every case id is unique and well-formed.
func TestCaseIDs(t *testing.T) {
	groups, err := conformance.Suite()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(conformance.IDPattern)
	seen := map[string]bool{}
	for _, c := range conformance.Cases(groups) {
		if !re.MatchString(c.ID) {
			t.Errorf("case id %q does not match %s", c.ID, conformance.IDPattern)
		}
		if seen[c.ID] {
			t.Errorf("case id %q is used twice", c.ID)
		}
		seen[c.ID] = true
	}
	if n := len(seen); n < 120 {
		t.Errorf("the suite has %d cases; want at least 120", n)
	}
}

// notYetReachable are the constraint codes of the error table that no
// route of today's server can produce; each comes with the routes that
// will (docs/design.md §6). A code leaves this list when its first case is
// written.
var notYetReachable = map[string]string{}

// elsewhere are codes the suite's cases cannot produce, each with the test
// that produces it over real HTTP instead. The Client-Vault v=1 resolve
// codes need an active vault key binding: a kid (SHA-256 of a secret K
// fresh to each run) shown on an MCP request and activated by the owner,
// which the case language cannot derive.
var elsewhere = map[string]string{
	"bad_request":   "internal/cli TestClientVaultResolve",
	"pending":       "internal/cli TestClientVaultResolve",
	"clock_skew":    "internal/cli TestClientVaultResolve",
	"unknown_ref":   "internal/cli TestClientVaultResolve",
	"expired":       "internal/cli TestClientVaultResolve",
	"too_many_refs": "internal/cli TestClientVaultResolve",
}

// untestable are codes no conforming answer may carry.
var untestable = map[string]string{
	"internal": "an unexpected failure; a conforming custodian does not produce it on demand",
}

// TestConstraintCoverage checks that every constraint code of the error
// table is asserted by at least one case, or is declared not yet reachable
// (or untestable) above.
func TestConstraintCoverage(t *testing.T) {
	groups, err := conformance.Suite()
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string][]string{}
	for _, c := range conformance.Cases(groups) {
		for _, s := range c.Steps {
			if s.Expect == nil {
				continue
			}
			code, _ := conformance.ClassConstraint(s.Expect.Class)
			if code != "" && !slices.Contains(covered[code], c.ID) {
				covered[code] = append(covered[code], c.ID)
			}
		}
	}
	codes := map[string]bool{}
	for _, k := range custodian.Kinds() {
		codes[k.Row().Constraint] = true
	}
	for _, code := range slices.Sorted(maps.Keys(codes)) {
		ids := covered[code]
		why, pending := notYetReachable[code]
		_, never := untestable[code]
		if where, ok := elsewhere[code]; ok && len(ids) == 0 {
			t.Logf("%-22s produced by %s", code, where)
			continue
		}
		switch {
		case len(ids) > 0 && (pending || never):
			t.Errorf("%s is covered by %d cases but declared unreachable: update the list", code, len(ids))
		case len(ids) > 0:
			t.Logf("%-22s %3d cases (e.g. %s)", code, len(ids), ids[0])
		case pending:
			t.Logf("%-22s not yet reachable: %s", code, why)
		case never:
			t.Logf("%-22s untestable: %s", code, untestable[code])
		default:
			t.Errorf("constraint %s is asserted by no case and not declared unreachable", code)
		}
	}
	for code := range notYetReachable {
		if !codes[code] {
			t.Errorf("notYetReachable lists %s, which is not in the error table", code)
		}
	}
}

// pendingRoutes are routes of the server's table whose cases are still to
// be written (they arrive with the work that added them).
var pendingRoutes = map[string]bool{}

// TestRouteCoverage checks that every route of the HTTP server's route
// table (internal/httpapi/server.go, routes()) is asserted by a step of
// some case, or is declared pending above.
func TestRouteCoverage(t *testing.T) {
	routes := serverRoutes(t)
	groups, err := conformance.Suite()
	if err != nil {
		t.Fatal(err)
	}
	type call struct{ method, path string }
	var calls []call
	for _, c := range conformance.Cases(groups) {
		for _, s := range c.Steps {
			p, _, _ := strings.Cut(s.Path, "?")
			calls = append(calls, call{s.Method, p})
		}
	}
	for _, rt := range routes {
		method, pattern, _ := strings.Cut(rt, " ")
		re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[a-z_]+\\\}`).ReplaceAllString(regexp.QuoteMeta(pattern), `[^/]+`) + "$")
		n := 0
		for _, c := range calls {
			if c.method == method && re.MatchString(c.path) {
				n++
			}
		}
		switch {
		case n > 0 && pendingRoutes[rt]:
			t.Errorf("%s has %d steps but is declared pending: remove it from pendingRoutes", rt, n)
		case n > 0:
			t.Logf("%-45s %3d steps", rt, n)
		case pendingRoutes[rt]:
			t.Logf("%-45s pending", rt)
		default:
			t.Errorf("route %s is asserted by no step", rt)
		}
	}
	for rt := range pendingRoutes {
		if !slices.Contains(routes, rt) {
			t.Errorf("pendingRoutes lists %s, which the server does not serve", rt)
		}
	}
}

// serverRoutes reads the route patterns from the routes method of
// internal/httpapi/server.go.
func serverRoutes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join("..", "internal", "httpapi", "server.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "routes" {
			return true
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && regexp.MustCompile(`^(GET|POST|PUT|DELETE|PATCH) /`).MatchString(s) {
				routes = append(routes, s)
			}
			return true
		})
		return false
	})
	if len(routes) < 20 {
		t.Fatalf("found %d routes in server.go; the route table moved?", len(routes))
	}
	return routes
}
