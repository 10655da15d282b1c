package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/phc-project/phc/internal/daemon/daemontest"
)

// phc runs one CLI command in-process against the harness's daemon and
// returns its exit code and output.
func (h *harness) phc(args ...string) (int, string, string) {
	h.t.Helper()
	env, out, errb := testEnv(h.t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	code := Run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func (h *harness) phcOK(args ...string) string {
	h.t.Helper()
	code, out, errs := h.phc(args...)
	if code != 0 {
		h.t.Fatalf("phc %s = exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// TestCLISession runs the README's first session through the CLI verbs,
// against a real daemon.
func TestCLISession(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.phcOK("persona", "add", "learning", "Learning")
	if out := h.phcOK("persona", "list"); !strings.Contains(out, "learning") {
		t.Fatalf("persona list = %q", out)
	}
	h.phcOK("consumer", "add", "tutor", "--secret", "tutor-secret-0123456789")
	out := h.phcOK("consumer", "add", "coach")
	secret := regexp.MustCompile(`secret \(shown once\): (\S+)`).FindStringSubmatch(out)
	if secret == nil {
		t.Fatalf("consumer add without --secret printed no secret: %q", out)
	}
	if out := h.phcOK("consumer", "list"); !strings.Contains(out, "coach") || !strings.Contains(out, "approved") {
		t.Fatalf("consumer list = %q", out)
	}
	h.phcOK("grant", "--to", "tutor", "--purpose", "learning", "--ops", "contribute", "--keys", "learning.*", "--expires", "24h")
	out = h.phcOK("grant", "--to", "coach", "--purpose", "learning", "--ops", "read", "--personas", "learning", "--expires", "24h")
	grantID := regexp.MustCompile(`grt_[A-Z2-7]{26}`).FindString(out)
	if grantID == "" {
		t.Fatalf("grant printed no id: %q", out)
	}
	tutor := strings.TrimSpace(h.phcOK("token", "--consumer", "tutor", "--secret", "tutor-secret-0123456789", "--scope", "learning.*", "--mode", "write"))
	h.must(201, "POST", "/phc/v1/proposals", tutor, map[string]any{
		"key": scheduleKey, "value": scheduleValue, "kind": "goal", "assertion": "reported"}, nil)
	h.must(201, "POST", "/phc/v1/proposals", tutor, map[string]any{
		"key": "learning.french", "value": "\x1b[31mred\x1b[0m", "kind": "note", "assertion": "reported"}, nil)

	out = h.phcOK("review")
	if strings.Contains(out, "\x1b") {
		t.Fatalf("review printed a raw escape sequence: %q", out)
	}
	ids := regexp.MustCompile(`prp_[A-Z2-7]{26}`).FindAllString(out, -1)
	if len(ids) != 2 || !strings.Contains(out, scheduleValue) {
		t.Fatalf("review = %q", out)
	}
	out = h.phcOK("review", "confirm", ids[0], "--persona", "learning")
	claimID := regexp.MustCompile(`clm_[A-Z2-7]{26}`).FindString(out)
	if claimID == "" {
		t.Fatalf("confirm printed no claim id: %q", out)
	}
	h.phcOK("review", "reject", ids[1], "--reason", "not mine")
	if out := h.phcOK("review"); !strings.Contains(out, "empty") {
		t.Fatalf("review after decisions = %q", out)
	}

	coach := strings.TrimSpace(h.phcOK("token", "--consumer", "coach", "--secret", secret[1]))
	var ctx contextAnswer
	h.must(200, "GET", "/phc/v1/context?purpose=learning", coach, nil, &ctx)
	if len(ctx.Claims) != 1 || ctx.Claims[0].ID != claimID {
		t.Fatalf("coach context = %+v", ctx)
	}

	if out := h.phcOK("claims"); !strings.Contains(out, claimID) {
		t.Fatalf("claims = %q", out)
	}
	if out := h.phcOK("claims", "--key", "nothing.*"); !strings.Contains(out, "no claims") {
		t.Fatalf("claims --key nothing.* = %q", out)
	}
	h.phcOK("claims", "correct", claimID, "--value", "Practice Spanish daily")
	if out := h.phcOK("claims", "versions", claimID); strings.Count(out, claimID) != 2 || !strings.Contains(out, "superseded") {
		t.Fatalf("versions = %q", out)
	}
	if out := h.phcOK("claims", "show", claimID, "--json"); !strings.Contains(out, `"version": 2`) {
		t.Fatalf("show --json = %q", out)
	}
	if out := h.phcOK("grant", "list"); !strings.Contains(out, grantID) {
		t.Fatalf("grant list = %q", out)
	}
	h.phcOK("revoke", grantID)
	h.must(200, "GET", "/phc/v1/context?purpose=learning", coach, nil, &ctx)
	if len(ctx.Claims) != 0 {
		t.Fatalf("coach after revoke = %+v", ctx)
	}
	if out := h.phcOK("receipts", "--limit", "5"); strings.Count(out, "\n") != 5 {
		t.Fatalf("receipts --limit 5 = %q", out)
	}
	if out := h.phcOK("receipts", "--verify"); !strings.HasPrefix(out, "ok:") {
		t.Fatalf("receipts --verify = %q", out)
	}
	h.phcOK("claims", "delete", claimID)
	if out := h.phcOK("status"); !strings.Contains(out, "unlocked") || !strings.Contains(out, "fields: 0") {
		t.Fatalf("status = %q", out)
	}

	h.phcOK("lock")
	if out := h.phcOK("status"); !strings.Contains(out, "vault: locked") {
		t.Fatalf("status after lock = %q", out)
	}
	if code, _, errs := h.phc("claims"); code != 1 || !strings.Contains(errs, "session") {
		t.Fatalf("claims while locked = %d %q", code, errs)
	}
	h.phcOK("unlock")
	if out := h.phcOK("unlock"); !strings.Contains(out, "already unlocked") {
		t.Fatalf("second unlock = %q", out)
	}
	h.phcOK("claims")
}

func TestCLIUsage(t *testing.T) {
	t.Parallel()
	env, _, errb := testEnv(t, nil)
	for _, args := range [][]string{{}, {"nope"}, {"review", "bogus"}, {"grant"}, {"revoke"}, {"claims", "show"}, {"serve", "--addr", "0.0.0.0:7200"}} {
		errb.Reset()
		if code := Run(context.Background(), env, args); code != 2 {
			t.Errorf("phc %q = exit %d (%s); want 2", args, code, errb)
		}
	}
}

func TestInit(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "vault")
	env, out, _ := testEnv(t, nil)
	if code := Run(context.Background(), env, []string{"init", "--data", dir}); code != 0 {
		t.Fatalf("init = %d", code)
	}
	if !regexp.MustCompile(`Secret Key: PHC1-`).MatchString(out.String()) {
		t.Fatalf("init printed no emergency kit: %q", out)
	}
	for _, f := range []string{"secret.key", "vault.json"} {
		info, err := os.Stat(filepath.Join(dir, f))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, info.Mode(), err)
		}
	}
	if code := Run(context.Background(), env, []string{"init", "--data", dir}); code != 1 {
		t.Fatalf("second init = %d; want 1", code)
	}
	noPW, _, errb := testEnv(t, map[string]string{})
	if code := Run(context.Background(), noPW, []string{"init", "--data", filepath.Join(t.TempDir(), "x")}); code != 1 || !strings.Contains(errb.String(), "PHC_PASSWORD") {
		t.Fatalf("init without password = %d %q", code, errb)
	}
}

// TestServeStartsLocked: with no password the daemon of an existing vault
// starts locked, answers only status and unlock, and unlocks over HTTP.
func TestServeStartsLocked(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "phc")
	h := startHarness(t, dir) // creates the vault
	h.stop()
	env, _, errb := testEnv(t, map[string]string{})
	log := daemontest.NewServingLog(errb)
	env.Stderr = log
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Run(ctx, env, []string{"serve", "--data", dir, "--addr", "127.0.0.1:0"}) }()
	select {
	case code := <-done:
		cancel()
		t.Fatalf("serve exited %d before serving", code)
	case <-log.Serving:
	}
	addr, err := os.ReadFile(filepath.Join(dir, addrFile))
	if err != nil {
		cancel()
		t.Fatalf("serve is serving but wrote no addr file: %v", err)
	}
	h.base, h.d = "http://"+strings.TrimSpace(string(addr)), nil
	var st map[string]any
	h.must(200, "GET", "/context/status", "", nil, &st)
	if st["locked"] != true {
		t.Fatalf("status = %v", st)
	}
	h.constraint(403, "vault_locked", "GET", "/phc/v1/claims", "ctx_whatever", nil)
	h.constraint(403, "vault_locked", "GET", "/phc/v1/review", "", nil)
	if _, err := os.Stat(filepath.Join(dir, sessionFile)); err == nil {
		t.Fatal("a locked daemon left a session file")
	}
	sk, _ := os.ReadFile(filepath.Join(dir, "secret.key"))
	h.constraint(401, "unauthenticated", "POST", "/context/unlock", "", map[string]string{"password": "wrong", "secret_key": strings.TrimSpace(string(sk))})
	var tok struct{ Token string }
	h.must(200, "POST", "/context/unlock", "", map[string]string{"password": testPassword, "secret_key": strings.TrimSpace(string(sk))}, &tok)
	h.must(200, "GET", "/phc/v1/claims", tok.Token, nil, nil)
	raw, _ := os.ReadFile(filepath.Join(dir, sessionFile))
	if strings.TrimSpace(string(raw)) != tok.Token {
		t.Fatal("unlock did not write the session file")
	}
	h.constraint(409, "conflict", "POST", "/context/unlock", "", map[string]string{"password": testPassword, "secret_key": strings.TrimSpace(string(sk))})
	var full map[string]json.RawMessage
	h.must(200, "GET", "/context/status", tok.Token, nil, &full)
	if _, ok := full["field_count"]; !ok {
		t.Fatalf("owner status lacks field_count: %v", full)
	}
	var anon map[string]json.RawMessage
	h.must(200, "GET", "/context/status", "", nil, &anon)
	if _, ok := anon["field_count"]; ok {
		t.Fatalf("anonymous status shows field_count: %v", anon)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit = %d", code)
	}
}

// TestServeRefusesRemnants: a data dir whose vault.json is gone but whose
// store and Secret Key remain is not overwritten by a new vault.
func TestServeRefusesRemnants(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "phc")
	h := startHarness(t, dir)
	h.stop()
	sk, err := os.ReadFile(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "vault.json")); err != nil {
		t.Fatal(err)
	}
	env, _, errb := testEnv(t, nil)
	if code := Run(context.Background(), env, []string{"serve", "--data", dir, "--addr", "127.0.0.1:0"}); code != 1 || !strings.Contains(errb.String(), "refusing") {
		t.Fatalf("serve over remnants = exit %d, %q; want a refusal", code, errb)
	}
	if code := Run(context.Background(), env, []string{"init", "--data", dir}); code != 1 {
		t.Fatalf("init over remnants = exit %d; want 1", code)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "secret.key"))
	if string(after) != string(sk) {
		t.Fatal("the Secret Key was overwritten")
	}
}

func TestNonUTF8PasswordRefused(t *testing.T) {
	t.Parallel()
	env, _, errb := testEnv(t, map[string]string{"PHC_PASSWORD": "caf\xe9-latin1"})
	if code := Run(context.Background(), env, []string{"init", "--data", filepath.Join(t.TempDir(), "v")}); code != 1 || !strings.Contains(errb.String(), "UTF-8") {
		t.Fatalf("init with a non-UTF-8 password = exit %d, %q", code, errb)
	}
}

// TestOwnerWinsOverSquatter: a name someone self-registered goes to the
// owner's own registration; the squatter's secret mints nothing.
func TestOwnerWinsOverSquatter(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(201, "POST", "/context/consumers/register", "", map[string]string{"name": "coach", "secret": "squatter-secret-0123"}, nil)
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": "coach", "secret": "owner-chosen-secret-01"}, nil)
	h.constraint(401, "unauthenticated", "POST", "/context/tokens/service", "",
		map[string]any{"consumer": "coach", "secret": "squatter-secret-0123", "scope": "*"})
	h.token("coach", "owner-chosen-secret-01", "*", "read")
	h.constraint(409, "conflict", "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": "coach", "secret": "owner-chosen-secret-01"})
}
