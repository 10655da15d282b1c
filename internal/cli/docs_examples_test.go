//go:build slow

package cli

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// needTool returns the interpreter found by find, or skips the test with
// why — except under CI, where a missing tool is a failure (.ci/run
// installs it).
func needTool(t *testing.T, find func() (string, error)) string {
	t.Helper()
	path, err := find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v; .ci/run should have installed it", err)
		}
		t.Skipf("%v: this test needs it (CI installs it)", err)
	}
	return path
}

// pythonWithRequests is the first python3 that imports requests: the one on
// PATH (which may be a pyenv shim without it), else Debian's.
func pythonWithRequests() (string, error) {
	var tried []string
	for _, c := range []string{"python3", "/usr/bin/python3"} {
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		tried = append(tried, p)
		if exec.Command(p, "-c", "import requests").Run() == nil {
			return p, nil
		}
	}
	if len(tried) == 0 {
		return "", errNoTool("python3 is not installed")
	}
	return "", errNoTool("no python3 with the requests package (" + strings.Join(tried, ", ") + "; apt-get install python3-requests)")
}

// node20 is a node of version 20 or later (fetch and readline/promises).
func node20() (string, error) {
	p, err := exec.LookPath("node")
	if err != nil {
		return "", errNoTool("node is not installed")
	}
	out, err := exec.Command(p, "--version").Output()
	major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".")
	if n, _ := strconv.Atoi(major); err != nil || n < 20 {
		return "", errNoTool("node " + strings.TrimSpace(string(out)) + " is older than 20")
	}
	return p, nil
}

type errNoTool string

func (e errNoTool) Error() string { return string(e) }

// TestDocsExamples runs each example app of docs/integrating.md, as a
// developer would, against a real daemon over HTTP, with the test as the
// owner: it approves the app when the app says its registration is
// pending, confirms the proposal and approves the context request when the
// app says it asked, and asserts everything the app prints. Each example
// runs twice against the same daemon, finding its port as the guide says
// (the daemon's addr file in PHC_HOME the first time, PHC_ADDR the second,
// never the default port): registering again with the same secret goes on,
// already approved.
func TestDocsExamples(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		find         func() (string, error)
	}{
		{"python", "tutor.py", pythonWithRequests},
		{"javascript", "tutor.mjs", node20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			interp := needTool(t, tc.find)
			h := startHarness(t, "")
			// The app meets the default rates and quotas, as it would on
			// a user's machine (the harness lifts them; 0 restores each).
			h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"reads_per_minute": 0, "writes_per_minute": 0,
				"live_tokens_per_app": 0, "pending_proposals_per_app": 0}, nil)
			script, err := filepath.Abs(filepath.Join(docsDir, "examples", tc.script))
			if err != nil {
				t.Fatal(err)
			}
			for run, where := range []string{"PHC_HOME=" + h.dir, "PHC_ADDR=" + strings.TrimPrefix(h.base, "http://")} {
				registered := "pending"
				if run > 0 {
					registered = "approved"
				}
				runDocsExample(t, h, interp, script, where, []string{
					"^registered tutor " + registered + "$",
					"^proposed prp_[A-Z0-9]{26} proposed$",
					"^requested req_[A-Z0-9]{26} (pending|approved)$",
					"^claim learning.spanish.goal = Practice Spanish twice a week$",
					"^field Practice Spanish twice a week$",
					"^proposal confirmed$",
				})
			}
		})
	}
}

// runDocsExample runs one example app to its end, with where (PHC_HOME or
// PHC_ADDR) telling it the daemon, playing the owner, and matches each line
// it prints against want.
func runDocsExample(t *testing.T, h *harness, interp, script, where string, want []string) {
	t.Helper()
	cmd := exec.Command(interp, script)
	cmd.Dir = t.TempDir()
	var env []string
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "PHC_") {
			env = append(env, v)
		}
	}
	cmd.Env = append(env, where, "HOME="+t.TempDir(), "TUTOR_SECRET=tutor-secret-0123456789")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	var lines []string
	var proposal string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		switch {
		case line == "registered tutor pending":
			// The owner approves the self-registered app and lets it
			// contribute under learning.*.
			var c struct{ Status string }
			h.must(200, "POST", "/phc/v1/consumers/tutor/approve", h.owner, nil, &c)
			if c.Status != "approved" {
				t.Fatalf("approve = %+v", c)
			}
			h.grant("tutor", "learning", "contribute", map[string]any{"keys": []string{"learning.*"}})
		case strings.HasPrefix(line, "proposed "):
			proposal = strings.Fields(line)[1]
		case strings.HasPrefix(line, "requested "):
			// The owner confirms the memory and approves the request
			// (unless it was granted at once).
			h.must(200, "POST", "/phc/v1/proposals/"+proposal+"/confirm", h.owner, map[string]any{"personas": []string{}}, nil)
			if strings.HasSuffix(line, " pending") {
				h.must(200, "POST", "/context/requests/"+strings.Fields(line)[1]+"/approve", h.owner, nil, nil)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s %s (%s): %v\nstdout:\n%s\nstderr:\n%s", interp, script, where, err, strings.Join(lines, "\n"), stderr.String())
	}
	if len(lines) != len(want) {
		t.Fatalf("the example (%s) printed %d lines, want %d:\n%s\nstderr:\n%s", where, len(lines), len(want), strings.Join(lines, "\n"), stderr.String())
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("%s: line %d = %q; want %s", where, i+1, lines[i], re)
		}
	}
}
