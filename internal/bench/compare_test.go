package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/term"
)

// fakePVaultEnv makes the test binary act as pvault (see TestMain): `init`
// asks for the password twice on its terminal, `serve --password-stdin`
// serves a fakePCP in pvault's dialect on VAULT_PORT.
const fakePVaultEnv = "BENCHTEST_FAKE_PVAULT"

func TestMain(m *testing.M) {
	if os.Getenv(fakePVaultEnv) == "1" {
		os.Exit(fakePVaultMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakePCP is a PCP server of 300-odd fields in memory: in pvault's dialect
// (routes under /vault, no consumer registration, tokens minted with the
// owner's session, every busyEvery-th PUT answered 500) or in the spec's
// (routes under /context, consumers registered and minting their own
// ctxs_ tokens).
type fakePCP struct {
	prefix    string
	consumers bool
	busyEvery int

	mu        sync.Mutex
	password  string
	secretKey string
	session   string // "" while locked
	fields    map[string]string
	scopes    map[string]string // token → scope
	secrets   map[string]string // consumer → secret
	puts      int
}

func newFakePCP(spec bool, password, secretKey string) *fakePCP {
	f := &fakePCP{prefix: "/vault", password: password, secretKey: secretKey, busyEvery: 7,
		fields: map[string]string{}, scopes: map[string]string{}, secrets: map[string]string{}}
	if spec {
		f.prefix, f.consumers, f.busyEvery = "/context", true, 0
	}
	f.session = f.newToken("")
	return f
}

func (f *fakePCP) newToken(prefix string) string {
	return prefix + randomText(32)
}

func fakeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *fakePCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	path, ok := strings.CutPrefix(r.URL.Path, f.prefix+"/")
	if !ok {
		fakeJSON(w, 404, map[string]string{"error": "not found"})
		return
	}
	bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	isOwner := f.session != "" && bearer == f.session
	scope, isReader := f.scopes[bearer]
	var body map[string]string
	if r.Method == "POST" || r.Method == "PUT" {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil && r.ContentLength != 0 {
			fakeJSON(w, 400, map[string]string{"error": "invalid JSON"})
			return
		}
	}
	route := r.Method + " " + path
	switch {
	case route == "GET status":
		fakeJSON(w, 200, map[string]any{"initialized": true, "locked": f.session == "", "field_count": len(f.fields)})
	case route == "POST unlock":
		switch {
		case f.session != "":
			fakeJSON(w, 409, map[string]string{"error": "vault is already unlocked"})
		case body["password"] != f.password || body["secret_key"] != f.secretKey:
			fakeJSON(w, 401, map[string]string{"error": "wrong password or secret key"})
		default:
			f.session = f.newToken("")
			fakeJSON(w, 200, map[string]string{"token": f.session})
		}
	case route == "POST consumers/register" && f.consumers:
		f.secrets[body["name"]] = body["secret"]
		fakeJSON(w, 201, map[string]string{"name": body["name"], "registered_at": time.Now().UTC().Format(time.RFC3339)})
	case route == "POST tokens/service" && f.consumers:
		if s, ok := f.secrets[body["consumer"]]; !ok || s != body["secret"] {
			fakeJSON(w, 401, map[string]string{"error": "unauthenticated consumer"})
			return
		}
		tok := f.newToken("ctxs_")
		f.scopes[tok] = body["scope"]
		fakeJSON(w, 201, map[string]string{"token": tok})
	case !isOwner && !isReader:
		fakeJSON(w, 401, map[string]string{"error": "missing authorization"})
	case route == "POST lock" && isOwner:
		f.session = ""
		fakeJSON(w, 200, map[string]string{"status": "locked"})
	case route == "POST tokens/service" && isOwner:
		tok := f.newToken("")
		f.scopes[tok] = body["scope"]
		fakeJSON(w, 200, map[string]string{"token": tok})
	case r.Method == "PUT" && strings.HasPrefix(path, "fields/") && isOwner:
		f.puts++
		if f.busyEvery > 0 && f.puts%f.busyEvery == 0 {
			fakeJSON(w, 500, map[string]string{"error": "internal error"})
			return
		}
		f.fields[strings.TrimPrefix(path, "fields/")] = body["value"]
		fakeJSON(w, 200, map[string]string{"status": "ok"})
	case route == "GET context":
		cats := map[string][]map[string]string{}
		for id, v := range f.fields {
			cat, _, _ := strings.Cut(id, ".")
			if isOwner || scope == "*" || strings.HasPrefix(id, strings.TrimSuffix(scope, "*")) {
				cats[cat] = append(cats[cat], map[string]string{"id": id, "category": cat, "value": v})
			}
		}
		fakeJSON(w, 200, map[string]any{"categories": cats})
	default:
		fakeJSON(w, 404, map[string]string{"error": "not found"})
	}
}

// fakePVaultMain is the test binary as pvault: init and serve.
func fakePVaultMain(args []string) int {
	dir := os.Getenv("VAULT_DIR")
	if len(args) == 0 || dir == "" {
		fmt.Fprintln(os.Stderr, "fake pvault: want a command and VAULT_DIR")
		return 2
	}
	switch args[0] {
	case "init":
		var pws [2]string
		for i, prompt := range []string{"Profile password: ", "Confirm password: "} {
			fmt.Fprint(os.Stderr, prompt)
			pw, err := term.ReadPassword(int(os.Stdin.Fd()))
			fmt.Fprintln(os.Stderr)
			if err != nil {
				fmt.Fprintf(os.Stderr, "Error: reading password: %v\n", err)
				return 1
			}
			pws[i] = string(pw)
		}
		if pws[0] != pws[1] || len(pws[0]) < 8 {
			fmt.Fprintln(os.Stderr, "Error: passwords do not match")
			return 1
		}
		sk := randomText(16)
		if err := errors.Join(os.MkdirAll(dir, 0o700),
			os.WriteFile(filepath.Join(dir, "secret.key"), []byte(sk+"\n"), 0o600),
			os.WriteFile(filepath.Join(dir, "password"), []byte(pws[0]), 0o600)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("Your secret key (save this somewhere safe):\n  %s\n", sk)
		return 0
	case "serve":
		var pw, sk string
		if _, err := fmt.Fscanln(os.Stdin, &pw); err != nil {
			return 1
		}
		if _, err := fmt.Fscanln(os.Stdin, &sk); err != nil {
			return 1
		}
		want, _ := os.ReadFile(filepath.Join(dir, "password"))
		wantSK, _ := os.ReadFile(filepath.Join(dir, "secret.key"))
		if pw != string(want) || sk != strings.TrimSpace(string(wantSK)) {
			fmt.Fprintln(os.Stderr, "Error: unlock: wrong password or secret key")
			return 1
		}
		f := newFakePCP(false, pw, sk)
		ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("VAULT_PORT"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := os.WriteFile(filepath.Join(dir, ".session"), []byte(f.session+"\n"), 0o600); err != nil {
			return 1
		}
		srv := &http.Server{Handler: f}
		go srv.Serve(ln)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		srv.Close()
		return 0
	}
	return 2
}

// TestTargetDialects seeds, authorizes and verifies both dialects of a
// running PCP server through --pcp-target's path.
func TestTargetDialects(t *testing.T) {
	for _, spec := range []bool{false, true} {
		name := map[bool]string{false: "pvault", true: "spec"}[spec]
		t.Run(name, func(t *testing.T) {
			f := newFakePCP(spec, "password", "key")
			srv := httptest.NewServer(f)
			defer srv.Close()
			tokenFile := filepath.Join(t.TempDir(), "session")
			if err := os.WriteFile(tokenFile, []byte(f.session+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			side := &CompareSide{}
			s, err := targetServer(t.Context(), srv.URL+"/", tokenFile, side)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			if err := s.prepare(t.Context()); err != nil {
				t.Fatal(err)
			}
			if side.ContextFields != ReadSet || side.StatusFields != ReadSet || s.reader == "" || s.reader == f.session {
				t.Errorf("context fields %d, status fields %d; want %d, %d and a reader's own token", side.ContextFields, side.StatusFields, ReadSet, ReadSet)
			}
			notes := strings.Join(side.Notes, "\n")
			if spec {
				if side.Routes != "/context/…" || !strings.Contains(side.Reader, "minted with its name and secret") || notes != "" {
					t.Errorf("routes %q, reader %q, notes %q; want /context, the consumer's own token, no notes", side.Routes, side.Reader, notes)
				}
				return
			}
			if side.Routes != "/vault/…" || !strings.Contains(side.Reader, "no consumer registration") {
				t.Errorf("routes %q, reader %q; want /vault and a token minted by the owner", side.Routes, side.Reader)
			}
			if side.SeedRetries == 0 || !strings.Contains(notes, "sent again one at a time") || !strings.Contains(notes, "ctxs_") {
				t.Errorf("seed retries %d, notes %q; want the 500s and the token's prefix noted", side.SeedRetries, notes)
			}
		})
	}
}

// TestInitPVault answers the password prompts of a pvault init that reads
// them from its terminal only.
func TestInitPVault(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the pseudo-terminal is Linux-only")
	}
	t.Setenv(fakePVaultEnv, "1")
	dir := filepath.Join(t.TempDir(), "vault")
	sk, err := initPVault(t.Context(), os.Args[0], dir, "a long password")
	if err != nil {
		t.Fatal(err)
	}
	if pw, _ := os.ReadFile(filepath.Join(dir, "password")); len(sk) != 32 || string(pw) != "a long password" {
		t.Errorf("secret key %d chars, password %q; want 32 and the one typed", len(sk), pw)
	}
	if _, err := initPVault(t.Context(), os.Args[0], dir+"2", "short"); err == nil || !strings.Contains(err.Error(), "terminal showed") {
		t.Errorf("init with a short password: %v; want its failure and what the terminal showed", err)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v; want %v", tc.in, got, tc.want)
		}
	}
	x := CompareRow{PHC: []Workload{{ReqPerSec: 200, P50Ms: 1}, {ReqPerSec: 300, P50Ms: 2, Errors: 1}, {ReqPerSec: 100, P50Ms: 3}},
		Other: []Workload{{ReqPerSec: 50, P50Ms: 4}, {ReqPerSec: 100, P50Ms: 4}, {ReqPerSec: 150, P50Ms: 4}}}
	x.summarize()
	if x.PHCMedian.ReqPerSec != 200 || x.PHCMedian.Errors != 1 || x.Ratio.ReqPerSec != 2 || x.Ratio.P50Ms != 0.5 || x.Ratio.P99Ms != 0 {
		t.Errorf("summarize: %+v", x)
	}
}
