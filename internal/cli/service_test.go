package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phc-project/phc/internal/daemon/daemontest"
)

// unitFile is a systemd unit: section → key → values, in order.
type unitFile map[string]map[string][]string

func parseUnit(t *testing.T, text string) unitFile {
	t.Helper()
	u := unitFile{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			key, value, ok := strings.Cut(line, "=")
			if !ok || section == "" || strings.HasSuffix(line, `\`) {
				t.Fatalf("phc.service:%d: not a key=value in a section: %q", n, line)
			}
			u[section][key] = append(u[section][key], value)
		}
	}
	return u
}

// one returns the single value of key in section.
func (u unitFile) one(t *testing.T, section, key string) string {
	t.Helper()
	vs := u[section][key]
	if len(vs) != 1 {
		t.Fatalf("phc.service: [%s] %s has %d values, want 1", section, key, len(vs))
	}
	return vs[0]
}

// plistValue is one element of a property list.
type plistValue struct {
	XMLName  xml.Name
	Text     string       `xml:",chardata"`
	Children []plistValue `xml:",any"`
}

// dict returns a <dict>'s entries by key.
func (v plistValue) dict(t *testing.T) map[string]plistValue {
	t.Helper()
	if v.XMLName.Local != "dict" || len(v.Children)%2 != 0 {
		t.Fatalf("not a plist dict: %+v", v)
	}
	out := map[string]plistValue{}
	for i := 0; i < len(v.Children); i += 2 {
		if v.Children[i].XMLName.Local != "key" {
			t.Fatalf("plist dict: %s where a key belongs", v.Children[i].XMLName.Local)
		}
		out[v.Children[i].Text] = v.Children[i+1]
	}
	return out
}

// serviceRun starts the daemon as a service manager would, from args (the
// command line after the binary): with no terminal and no password. It
// checks that the daemon starts locked, that `phc unlock` then unlocks it,
// and that it stops cleanly on cancellation. The vault in the args' --data
// must exist.
func serviceRun(t *testing.T, args []string) {
	t.Helper()
	var data string
	args = slices.Clone(args)
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--addr":
			args[i+1] = "127.0.0.1:0" // never the user's port
		case "--data":
			data = args[i+1]
		}
	}
	if data == "" {
		t.Fatalf("the service's command line names no --data: %q", args)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, out, errb := testEnv(t, map[string]string{}) // a service manager gives no password and no terminal
	log := daemontest.NewServingLog(errb)
	env.Stderr = log
	done := make(chan int, 1)
	go func() { done <- Run(ctx, env, args) }()
	select {
	case code := <-done:
		t.Fatalf("phc %s exited %d: %s", strings.Join(args, " "), code, errb)
	case <-log.Serving:
	}
	addr, err := os.ReadFile(filepath.Join(data, addrFile))
	if err != nil {
		t.Fatalf("phc %s is serving but wrote no addr file: %v", strings.Join(args, " "), err)
	}
	status := func() (locked bool) {
		t.Helper()
		resp, err := http.Get("http://" + strings.TrimSpace(string(addr)) + "/context/status")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st struct{ Locked bool }
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st.Locked
	}
	if !status() {
		t.Fatal("the service started unlocked without a password")
	}
	if strings.Contains(out.String(), "Secret Key") {
		t.Fatalf("the service printed the Secret Key: %s", out)
	}
	// The owner unlocks it from a terminal (here: PHC_PASSWORD).
	uenv, uout, uerr := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword})
	if code := Run(ctx, uenv, []string{"unlock", "--data", data}); code != 0 || strings.TrimSpace(uout.String()) != "unlocked" {
		t.Fatalf("phc unlock = %d %q %s", code, uout, uerr)
	}
	if status() {
		t.Fatal("still locked after phc unlock")
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("the service exited %d on stop: %s", code, errb)
	}
}

// initVault makes the vault a service expects (phc init, as docs/operations.md
// says to run first).
func initVault(t *testing.T, data string) {
	t.Helper()
	env, _, errb := testEnv(t, nil)
	if code := Run(context.Background(), env, []string{"init", "--data", data}); code != 0 {
		t.Fatalf("phc init: %s", errb)
	}
}

// TestSystemdUnit: docs/phc.service parses, serves only an existing vault,
// and its ExecStart — with %h a temporary home — starts a locked daemon
// that phc unlock unlocks. systemd-analyze verifies it where installed.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	text := readDoc(t, "phc.service")
	u := parseUnit(t, text)
	home := t.TempDir()
	expand := func(s string) string {
		s = strings.ReplaceAll(s, "%h", home)
		if strings.Contains(s, "%") {
			t.Fatalf("phc.service: a specifier other than %%h in %q", s)
		}
		return s
	}
	if u.one(t, "Install", "WantedBy") != "default.target" {
		t.Error("phc.service is not wanted by default.target: it would not start at login")
	}
	if u.one(t, "Service", "UMask") != "0077" {
		t.Error("phc.service: UMask is not 0077")
	}
	exec0 := strings.Fields(expand(u.one(t, "Service", "ExecStart")))
	if exec0[0] != filepath.Join(home, "go", "bin", "phc") {
		t.Errorf("ExecStart runs %s, not where go install puts phc", exec0[0])
	}
	if !strings.Contains(text, "\n#EnvironmentFile=%h/.config/phc/env\n") {
		t.Error("phc.service lacks the commented EnvironmentFile line docs/operations.md describes")
	}
	cond := expand(u.one(t, "Unit", "ConditionPathExists"))
	var data string
	for i, a := range exec0 {
		if a == "--data" {
			data = exec0[i+1]
		}
	}
	if _, err := os.Stat(cond); err == nil {
		t.Fatal("the condition holds before phc init")
	}
	initVault(t, data)
	if _, err := os.Stat(cond); err != nil {
		t.Fatalf("ConditionPathExists=%s does not hold after phc init: %v", cond, err)
	}
	serviceRun(t, exec0[1:])

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit's syntax is checked by the parser above only")
		return
	}
	// systemd-analyze checks that ExecStart is executable: put a phc
	// where the unit expects it.
	if err := os.MkdirAll(filepath.Dir(exec0[0]), 0o700); err != nil {
		t.Fatal(err)
	}
	linkPHC(t, exec0[0])
	unit := filepath.Join(t.TempDir(), "phc.service")
	if err := os.WriteFile(unit, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	runtime := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(analyze, "--user", "verify", unit)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+runtime)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err = cmd.Run()
	if strings.Contains(stderr.String(), "Failed to initialize manager") {
		// Not the unit's fault: this machine cannot run a user manager
		// even offline.
		t.Logf("systemd-analyze cannot run here: %s", stderr.String())
		return
	}
	if err != nil || stderr.Len() > 0 {
		t.Errorf("systemd-analyze --user verify phc.service: %v\n%s", err, stderr.String())
	}
}

// TestLaunchdPlist: docs/dev.phc.plist is a well-formed property list whose
// ProgramArguments — with /Users/YOU replaced by a home, as the install line
// of docs/operations.md does — start a locked daemon that phc unlock unlocks.
func TestLaunchdPlist(t *testing.T) {
	t.Parallel()
	text := readDoc(t, "dev.phc.plist")
	if !strings.HasPrefix(text, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">`) {
		t.Error("dev.phc.plist does not begin with the plist XML declaration and DOCTYPE")
	}
	home := t.TempDir()
	var root plistValue
	if err := xml.Unmarshal([]byte(strings.ReplaceAll(text, "/Users/YOU", home)), &root); err != nil {
		t.Fatalf("dev.phc.plist: %v", err)
	}
	if root.XMLName.Local != "plist" || len(root.Children) != 1 {
		t.Fatalf("dev.phc.plist: the root is not a plist of one dict")
	}
	d := root.Children[0].dict(t)
	if d["Label"].Text != "dev.phc" {
		t.Errorf("Label = %q; want dev.phc, as the file name and the launchctl lines of docs/operations.md say", d["Label"].Text)
	}
	if d["RunAtLoad"].XMLName.Local != "true" {
		t.Error("RunAtLoad is not true: it would not start at login")
	}
	if d["Umask"].Text != "63" {
		t.Error("Umask is not 63 (077)")
	}
	var args []string
	for _, s := range d["ProgramArguments"].Children {
		if s.XMLName.Local != "string" {
			t.Fatalf("ProgramArguments holds a %s", s.XMLName.Local)
		}
		args = append(args, s.Text)
	}
	if len(args) < 2 || args[0] != filepath.Join(home, "go", "bin", "phc") {
		t.Fatalf("ProgramArguments = %q; want the go install path first", args)
	}
	if !strings.Contains(readDoc(t, "operations.md"), `sed "s|/Users/YOU|$HOME|g" docs/dev.phc.plist > ~/Library/LaunchAgents/dev.phc.plist`) {
		t.Error("docs/operations.md does not install dev.phc.plist with /Users/YOU replaced")
	}
	for i, a := range args {
		if a == "--data" {
			initVault(t, args[i+1])
		}
	}
	serviceRun(t, args[1:])
}
