package conformance_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestDaemonWiredAsServe checks that the in-process daemon the suite runs
// against is the one phc serve runs: the session-file hooks are there (the
// owner's session is written on unlock and removed on lock), and an ID
// token claiming a trusted issuer is verified against that issuer (the OIDC
// verifier is there: it fetches the issuer's discovery document).
func TestDaemonWiredAsServe(t *testing.T) {
	d := startDaemon(t)
	session := filepath.Join(d.dir, "session")
	raw, err := os.ReadFile(session)
	if err != nil || strings.TrimSpace(string(raw)) != d.owner {
		t.Errorf("session file after unlock = %q, %v; want the owner's session", raw, err)
	}

	var fetched atomic.Int32
	issuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(issuer.Close)
	send := func(method, path, token, ctype string, body []byte) int {
		t.Helper()
		req, err := http.NewRequest(method, d.url+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := send("POST", "/phc/v1/trust", d.owner, "application/json",
		[]byte(`{"issuer":"`+issuer.URL+`","audience":"phc-test"}`)); st != http.StatusCreated && st != http.StatusOK {
		t.Fatalf("POST /phc/v1/trust = %d", st)
	}
	enc := base64.RawURLEncoding.EncodeToString
	idToken := enc([]byte(`{"alg":"RS256","kid":"k"}`)) + "." + enc([]byte(`{"iss":"`+issuer.URL+`","sub":"someone","aud":"phc-test"}`)) + "." + enc([]byte("sig"))
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"}, "subject_token": {idToken}}
	if st := send("POST", "/phc/v1/token", "", "application/x-www-form-urlencoded", []byte(form.Encode())); st != http.StatusUnauthorized {
		t.Errorf("token exchange with an unverifiable ID token = %d; want 401", st)
	}
	if fetched.Load() == 0 {
		t.Errorf("the token exchange never asked the trusted issuer: the daemon has no OIDC verifier")
	}

	if st := send("POST", "/context/lock", d.owner, "application/json", nil); st != http.StatusOK && st != http.StatusNoContent {
		t.Fatalf("POST /context/lock = %d", st)
	}
	if _, err := os.Stat(session); !os.IsNotExist(err) {
		t.Errorf("session file after lock: %v; want it removed", err)
	}
}
