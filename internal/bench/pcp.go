package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// pcpServer is the other PCP server of a comparison: pvault started by the
// bench on a fresh vault, or a server already running at a URL. The bench
// speaks to it through the PCP API only, under the route prefix it finds
// ("/context" as the spec has it, or "/vault" as pvault serves it).
type pcpServer struct {
	label  string // "pvault" or "target"
	base   string // http://127.0.0.1:PORT
	prefix string
	api    *api
	owner  string // the owner's session token
	reader string // the reader's service token
	d      *daemon
	side   *CompareSide
	// pvault's vault: its dir, password and secret key.
	dir, pw, sk string
}

// pvaultEnv is the bench's environment without its own PHC_ or VAULT_
// variables, plus pvault's data dir and port.
func pvaultEnv(dir, port string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PHC_") && !strings.HasPrefix(kv, "VAULT_") {
			env = append(env, kv)
		}
	}
	return append(env, "VAULT_DIR="+dir, "VAULT_PORT="+port)
}

// initPVault runs `bin init` for a new vault in dir. pvault reads the
// profile password (twice) from a terminal only, so the bench gives it a
// pseudo-terminal and answers each prompt; its standard output, which
// shows the secret key, is discarded, and the key is read from
// dir/secret.key.
func initPVault(ctx context.Context, bin, dir, password string) (secretKey string, err error) {
	ctl, tty, err := openPTY()
	if err != nil {
		return "", err
	}
	defer ctl.Close()
	cmd := exec.CommandContext(ctx, bin, "init")
	cmd.Env = pvaultEnv(dir, "0")
	cmd.Stdin, cmd.Stderr, cmd.Stdout = tty, tty, nil
	setParentDeathSignal(cmd)
	err = cmd.Start()
	tty.Close()
	if err != nil {
		return "", fmt.Errorf("start %s init: %w", bin, err)
	}
	// The terminal shows the prompts only: the password is not echoed,
	// and the secret key goes to standard output.
	var (
		mu     sync.Mutex
		screen []byte
	)
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 1024)
		answered := 0
		for {
			n, err := ctl.Read(buf)
			mu.Lock()
			screen = append(screen, buf[:n]...)
			prompts := bytes.Count(bytes.ToLower(screen), []byte("password: "))
			mu.Unlock()
			for ; answered < prompts; answered++ {
				io.WriteString(ctl, password+"\n")
			}
			if err != nil {
				return // EIO once the child has exited
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		err = fmt.Errorf("%v", <-done)
		err = fmt.Errorf("did not finish within 2 minutes (%w)", err)
	}
	select {
	case <-read:
	case <-time.After(5 * time.Second):
	}
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		return "", fmt.Errorf("%s init: %w; its terminal showed: %q", bin, err, snippet(screen, 300))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "secret.key"))
	if err != nil {
		return "", fmt.Errorf("%s init made no secret key: %w", bin, err)
	}
	return strings.TrimSpace(string(raw)), nil
}

// startPVault makes a fresh vault in dir and serves it with
// `bin serve --password-stdin` on a free loopback port (VAULT_DIR and
// VAULT_PORT set), then waits until it answers unlocked.
func startPVault(ctx context.Context, bin, dir string, side *CompareSide) (*pcpServer, error) {
	s := &pcpServer{label: "pvault", dir: dir, pw: randomText(16), side: side}
	start := time.Now()
	var err error
	if s.sk, err = initPVault(ctx, bin, dir, s.pw); err != nil {
		return nil, err
	}
	side.InitMs = ms(time.Since(start))
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "serve", "--password-stdin")
	cmd.Env = pvaultEnv(dir, port)
	cmd.Stdin = strings.NewReader(s.pw + "\n" + s.sk + "\n")
	if s.d, err = startProcess(cmd, "http://"+addr); err != nil {
		return nil, err
	}
	s.base = s.d.base
	probe := readyClient()
	defer probe.CloseIdleConnections()
	ready, err := s.d.waitReady(ctx, 2*time.Minute, func() (bool, error) {
		// pvault writes its session file once it listens.
		if _, err := os.Stat(filepath.Join(dir, ".session")); err != nil {
			return false, err
		}
		return s.findPrefix(ctx, probe)
	})
	if err != nil {
		s.d.kill()
		return nil, fmt.Errorf("pvault: %w", err)
	}
	side.ReadyMs = ms(ready)
	return s, nil
}

// targetServer is a PCP server already running at base; the owner's
// session token is in tokenFile (pvault's is $VAULT_DIR/.session).
func targetServer(ctx context.Context, base, tokenFile string, side *CompareSide) (*pcpServer, error) {
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("the owner's session token: %w", err)
	}
	s := &pcpServer{label: "target", base: strings.TrimRight(base, "/"), owner: strings.TrimSpace(string(raw)), side: side}
	if s.owner == "" {
		return nil, fmt.Errorf("the owner's session token: %s is empty", tokenFile)
	}
	probe := readyClient()
	defer probe.CloseIdleConnections()
	ok, err := s.findPrefix(ctx, probe)
	if err != nil || !ok {
		return nil, fmt.Errorf("%s: no PCP status under /context or /vault (%v)", s.base, err)
	}
	return s, nil
}

// findPrefix finds the route prefix: the first of /context (the spec's)
// and /vault (pvault's) whose GET …/status answers 200 with a status; it
// reports whether the vault is unlocked.
func (s *pcpServer) findPrefix(ctx context.Context, cl *http.Client) (bool, error) {
	var errs []error
	for _, prefix := range []string{"/context", "/vault"} {
		locked, err := pcpLocked(ctx, cl, s.base+prefix+"/status")
		if err != nil {
			errs = append(errs, fmt.Errorf("GET %s/status: %w", prefix, err))
			continue
		}
		s.prefix = prefix
		s.side.Routes = prefix + "/…"
		if locked {
			return false, errLocked
		}
		return true, nil
	}
	return false, errors.Join(errs...)
}

// pcpLocked reads GET url, a PCP status: whether the vault is locked.
func pcpLocked(ctx context.Context, cl *http.Client, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return false, err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return false, fmt.Errorf("answered %d", resp.StatusCode)
	}
	var st struct {
		Locked *bool `json:"locked"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st.Locked == nil {
		return false, fmt.Errorf("not a status (%v)", err)
	}
	return *st.Locked, nil
}

// note adds a remark to the comparison's side.
func (s *pcpServer) note(format string, args ...any) {
	s.side.Notes = append(s.side.Notes, fmt.Sprintf(format, args...))
}

// unlock gets the owner's session through the API: pvault serve unlocks
// at its start (its session is in dir/.session), so the bench locks it
// (POST …/lock) and unlocks it again (POST …/unlock with the password and
// the secret key), as the spec's owner would, and times the unlock.
func (s *pcpServer) unlock(ctx context.Context) error {
	raw, err := os.ReadFile(filepath.Join(s.dir, ".session"))
	if err != nil {
		return err
	}
	session := strings.TrimSpace(string(raw))
	if err := s.api.call(ctx, "POST", s.prefix+"/lock", session, nil, 200, nil); err != nil {
		s.owner = session
		s.note("owner session from %s/.session: POST %s/lock failed (%v)", filepath.Base(s.dir), s.prefix, err)
		return nil
	}
	var out struct {
		Token string `json:"token"`
	}
	start := time.Now()
	err = s.api.call(ctx, "POST", s.prefix+"/unlock", "", map[string]string{"password": s.pw, "secret_key": s.sk}, 200, &out)
	s.side.UnlockMs = ms(time.Since(start))
	if err != nil {
		return err
	}
	if out.Token == "" {
		return fmt.Errorf("POST %s/unlock: no token in the answer", s.prefix)
	}
	s.owner = out.Token
	s.side.Owner = fmt.Sprintf("POST %s/lock, then POST %s/unlock {password, secret_key}", s.prefix, s.prefix)
	return nil
}

// prepare unlocks (pvault), seeds the read set, authorizes the reader and
// checks what the reader's context holds.
func (s *pcpServer) prepare(ctx context.Context) error {
	s.api = newAPI(s.base)
	if s.d != nil {
		if err := s.unlock(ctx); err != nil {
			return fmt.Errorf("owner unlock: %w", err)
		}
	} else {
		s.side.Owner = "the session token of --pcp-token-file"
	}
	start := time.Now()
	if err := s.seed(ctx); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	s.side.SeedSeconds = time.Since(start).Seconds()
	var err error
	if s.reader, err = s.authorize(ctx); err != nil {
		return fmt.Errorf("the reader's token: %w", err)
	}
	return s.verify(ctx)
}

// seedAttempts is how often a field's PUT is sent, one at a time, when
// the server answered 5xx to it among concurrent ones (pvault answers 500
// when its SQLite store is busy).
const seedAttempts = 5

// seed writes the read set as the owner: PUT …/fields/work.f000 …
// work.f299 {"value": …}, the same values as phc's, seedWorkers at a time
// as phc's are proposed. The fields answered 5xx are counted, and written
// again one at a time.
func (s *pcpServer) seed(ctx context.Context) error {
	put := func(i int) (int, error) {
		body := append(append([]byte(`{"value":`), textValue("Work fact", i)...), '}')
		path := fmt.Sprintf("%s/fields/work.f%03d", s.prefix, i)
		status, raw, err := s.api.send(ctx, "PUT", path, s.owner, body)
		if err != nil {
			return 0, fmt.Errorf("PUT %s: %w", path, err)
		}
		if status < 200 || status > 299 {
			return status, &statusError{method: "PUT", path: path, status: status, want: 200, body: snippet(bytes.TrimSpace(raw), 200)}
		}
		return status, nil
	}
	var (
		mu     sync.Mutex
		failed []int
		first  error
	)
	err := parallel(ctx, ReadSet, seedWorkers, func(i int) error {
		status, err := put(i)
		if err != nil && status >= 500 {
			mu.Lock()
			defer mu.Unlock()
			failed = append(failed, i)
			if first == nil {
				first = err
			}
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(failed) == 0 {
		return nil
	}
	s.side.SeedRetries = len(failed)
	s.note("%d of the %d PUT %s/fields/{id} sent %d at a time failed (the first: %v); they were sent again one at a time",
		len(failed), ReadSet, s.prefix, seedWorkers, first)
	for _, i := range failed {
		for attempt := 1; ; attempt++ {
			status, err := put(i)
			if err == nil {
				break
			}
			if status < 500 || attempt == seedAttempts {
				return err
			}
			time.Sleep(time.Duration(attempt) * 10 * time.Millisecond)
		}
	}
	return nil
}

// authorize gets the reader a read token of scope work.*: the spec's way
// first (POST …/consumers/register {name, secret}, then POST
// …/tokens/service with the consumer's name and secret), and where the
// server has no consumer registration (pvault) or wants the owner, POST
// …/tokens/service as the owner.
func (s *pcpServer) authorize(ctx context.Context) (string, error) {
	name, secret := "phc-bench-reader-"+randomText(4), randomText(16)
	reg := map[string]string{"name": name, "secret": secret}
	registered := false
	status, _, err := s.api.send(ctx, "POST", s.prefix+"/consumers/register", "", mustJSON(reg))
	if err != nil {
		return "", err
	}
	var ownerStatus int
	if status >= 200 && status <= 299 {
		registered = true
	} else {
		ownerStatus, _, err = s.api.send(ctx, "POST", s.prefix+"/consumers/register", s.owner, mustJSON(reg))
		if err != nil {
			return "", err
		}
		registered = ownerStatus >= 200 && ownerStatus <= 299
	}
	if !registered {
		s.note("no consumer registration: POST %s/consumers/register answered %d, and %d with the owner's session", s.prefix, status, ownerStatus)
	}
	mint := map[string]string{"consumer": name, "scope": "work.*", "ttl": "720h", "mode": "read"}
	if registered {
		mint["secret"] = secret
	}
	var tok struct {
		Token string `json:"token"`
	}
	try := func(token string) (int, error) {
		status, raw, err := s.api.send(ctx, "POST", s.prefix+"/tokens/service", token, mustJSON(mint))
		if err != nil {
			return 0, err
		}
		if status < 200 || status > 299 {
			return status, &statusError{method: "POST", path: s.prefix + "/tokens/service", status: status, want: 201, body: snippet(raw, 300)}
		}
		if err := json.Unmarshal(raw, &tok); err != nil || tok.Token == "" {
			return status, fmt.Errorf("POST %s/tokens/service: no token in the answer (%v)", s.prefix, err)
		}
		return status, nil
	}
	bySecret := false
	if registered {
		if status, err = try(""); err == nil {
			bySecret = true
		}
	}
	if !bySecret {
		first := err
		if status, err = try(s.owner); err != nil {
			return "", errors.Join(first, err)
		}
	}
	switch {
	case bySecret:
		s.side.Reader = fmt.Sprintf("consumer %s registered (POST %s/consumers/register), its token minted with its name and secret (POST %s/tokens/service = %d)",
			name, s.prefix, s.prefix, status)
	case registered:
		s.side.Reader = fmt.Sprintf("consumer %s registered (POST %s/consumers/register), but its token needed the owner's session (POST %s/tokens/service = %d)",
			name, s.prefix, s.prefix, status)
	default:
		s.side.Reader = fmt.Sprintf("no consumer registration; a token for consumer %s minted with the owner's session (POST %s/tokens/service = %d)",
			name, s.prefix, status)
	}
	s.side.Reader += `; scope "work.*", mode read`
	if !strings.HasPrefix(tok.Token, "ctxs_") {
		s.note("its service token does not start with ctxs_ (the spec's prefix)")
	}
	return tok.Token, nil
}

func mustJSON(v any) []byte {
	raw, _ := json.Marshal(v)
	return raw
}

// verify checks that the reader's GET …/context holds exactly the read
// set, and notes the owner's field count.
func (s *pcpServer) verify(ctx context.Context) error {
	var st struct {
		FieldCount *int `json:"field_count"`
	}
	if err := s.api.call(ctx, "GET", s.prefix+"/status", s.owner, nil, 200, &st); err == nil && st.FieldCount != nil {
		s.side.StatusFields = *st.FieldCount
	}
	path := s.prefix + "/context"
	status, raw, err := s.api.send(ctx, "GET", path, s.reader, nil)
	if err != nil || status != 200 {
		return fmt.Errorf("the reader's GET %s = %d %s, %v", path, status, snippet(raw, 300), err)
	}
	var bundle struct {
		Categories map[string][]struct {
			ID    string `json:"id"`
			Value any    `json:"value"`
		} `json:"categories"`
	}
	if err := json.Unmarshal(raw, &bundle); err != nil {
		return fmt.Errorf("the reader's GET %s: %w", path, err)
	}
	n := 0
	for cat, fs := range bundle.Categories {
		if cat != "work" {
			return fmt.Errorf("the reader's GET %s shows category %q: its scope is work.*", path, cat)
		}
		for _, f := range fs {
			if f.Value == nil {
				return fmt.Errorf("the reader's GET %s: field %s has no value", path, f.ID)
			}
		}
		n += len(fs)
	}
	s.side.ContextFields, s.side.ContextBytes = n, len(raw)
	if n != ReadSet {
		return fmt.Errorf("the reader's GET %s returned %d fields; want exactly %d", path, n, ReadSet)
	}
	return nil
}

// mem reads pvault's memory; nil for a target or where it cannot.
func (s *pcpServer) mem() *Mem {
	if s.d == nil {
		return nil
	}
	m, err := readMem(s.d.pid())
	if err != nil {
		return nil
	}
	return m
}

// close stops pvault and lets go of the connections.
func (s *pcpServer) close() error {
	if s.api != nil {
		s.api.close()
	}
	if s.d == nil {
		return nil
	}
	_, err := s.d.stop()
	return err
}
