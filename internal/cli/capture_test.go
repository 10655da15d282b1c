package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookCapture: phc hook capture, run as Claude Code's Stop hook,
// proposes under the app's own token what the last turn selects — the
// person's remember: lines (reported) and the assistant's <remember>
// blocks (inferred) — with the session and message ids as evidence, and
// nothing else of the transcript; install adds it to Claude Code's
// settings beside the resolve hook.
func TestHookCapture(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	tok := h.consumerFor("claude-code", "notes.*", "write", "assist")
	h.grant("claude-code", "assist", "contribute", map[string]any{"keys": []string{"notes.*"}})
	dir := t.TempDir()
	transcript := filepath.Join(dir, "session.jsonl")
	lines := []map[string]any{
		{"type": "user", "uuid": "u-1", "message": map[string]any{"role": "user", "content": "remember: an old turn, not captured"}},
		{"type": "assistant", "uuid": "a-1", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "ok"}}}},
		{"type": "user", "uuid": "u-2", "message": map[string]any{"role": "user", "content": "Please fix the build.\nRemember that I deploy on Fridays\nremember: my token is sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAA"}},
		{"type": "assistant", "uuid": "a-2", "message": map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "Fixed. <remember>The project builds with make release</remember> The secret plan stays here."},
			map[string]any{"type": "tool_use", "name": "Bash", "input": map[string]string{"command": "make"}}}}},
	}
	var body strings.Builder
	for _, l := range lines {
		raw, _ := json.Marshal(l)
		body.Write(raw)
		body.WriteByte('\n')
	}
	body.WriteString(strings.Repeat("x", 5<<20) + "\n") // a line too long to read: skipped
	if err := os.WriteFile(transcript, []byte(body.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	env, _, errb := testEnv(t, map[string]string{"PHC_HOME": h.dir, "PHC_TOKEN": tok})
	event, _ := json.Marshal(map[string]any{"session_id": "sess-9", "transcript_path": transcript, "hook_event_name": "Stop"})
	env.Stdin = strings.NewReader(string(event))
	if code := Run(t.Context(), env, []string{"hook", "capture"}); code != 0 {
		t.Fatalf("phc hook capture = %d\n%s", code, errb)
	}
	if strings.Contains(errb.String(), "sk-proj") {
		t.Fatalf("the hook quotes the credential:\n%s", errb)
	}
	var queue struct {
		Proposals []struct {
			Key       string          `json:"key"`
			Value     json.RawMessage `json:"value"`
			Assertion string          `json:"assertion"`
			Evidence  []struct {
				Ref string `json:"ref"`
			} `json:"evidence"`
			Producer struct {
				Authenticated struct{ Kind, ID string } `json:"authenticated"`
			} `json:"producer"`
		} `json:"proposals"`
	}
	h.must(200, "GET", "/phc/v1/review", h.owner, nil, &queue)
	got := map[string]string{}
	for _, p := range queue.Proposals {
		refs := []string{}
		for _, e := range p.Evidence {
			refs = append(refs, e.Ref)
		}
		got[string(p.Value)] = p.Assertion + " " + p.Producer.Authenticated.Kind + ":" + p.Producer.Authenticated.ID + " " + strings.Join(refs, ",")
		if !strings.HasPrefix(p.Key, "notes.claude_code.") {
			t.Errorf("key %s", p.Key)
		}
	}
	want := map[string]string{
		`"I deploy on Fridays"`:                  "reported consumer:claude-code claude-code:session/sess-9,claude-code:message/u-2",
		`"The project builds with make release"`: "inferred consumer:claude-code claude-code:session/sess-9,claude-code:message/a-2",
	}
	if len(got) != len(want) {
		t.Fatalf("proposals = %v; want %v", got, want)
	}
	for v, w := range want {
		if got[v] != w {
			t.Errorf("proposal %s = %q; want %q", v, got[v], w)
		}
	}

	// install adds the Stop hook beside resolve and seen.
	settings := filepath.Join(dir, "settings.json")
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "hook", "install", "claude-code", "--settings", settings, "--data", h.dir, "--capture-token-file", tokenFile)
	if code != 0 || !strings.Contains(out, "hooks.Stop entry") {
		t.Fatalf("phc hook install = %d\n%s%s", code, out, errs)
	}
	raw, _ := os.ReadFile(settings)
	if !strings.Contains(string(raw), "hook capture --data") || !strings.Contains(string(raw), "--token-file") {
		t.Fatalf("settings = %s", raw)
	}
}

// FuzzCaptureTranscript: no transcript makes phc hook capture's reader
// panic, and what it selects stays within its bounds.
func FuzzCaptureTranscript(f *testing.F) {
	f.Add([]byte(`{"type":"user","uuid":"u","message":{"role":"user","content":"remember: tea"}}` + "\n" +
		`{"type":"assistant","uuid":"a","message":{"role":"assistant","content":[{"type":"text","text":"<remember>x</remember>"}]}}` + "\n"))
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Remember that a\nremember: b"}]}}`))
	f.Add([]byte("\n\n{}\n[1,2]\n" + `{"type":"assistant","message":{"content":"<remember></remember><remember>` + strings.Repeat("y", 5000) + `</remember>"}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "t.jsonl")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := lastTurn(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > maxCaptured {
			t.Fatalf("%d statements selected", len(got))
		}
		for _, c := range got {
			if c.text == "" || len(c.text) > maxCapturedText {
				t.Fatalf("selected %q", c.text)
			}
		}
	})
}
