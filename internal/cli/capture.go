package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/quarantine/importer"
)

// Bounds of what phc hook capture reads and proposes.
const (
	maxHookEvent     = 64 << 10 // the hook's event on standard input
	maxTranscriptRow = 4 << 20  // one line of the transcript; longer lines are skipped
	maxCaptured      = 20       // proposals one completion may make
	maxCapturedText  = 4 << 10  // one captured statement
)

// rememberLine selects what the person asks to be remembered: a line of
// their message that begins "remember:" or "remember that".
var rememberLine = regexp.MustCompile(`(?im)^\s*remember(?::|\s+that\b)\s*(.+?)\s*$`)

// rememberBlock selects what the assistant marks to be remembered:
// <remember>…</remember> in its answer.
var rememberBlock = regexp.MustCompile(`(?is)<remember>\s*(.+?)\s*</remember>`)

// captured is one statement the hook selected from a completion.
type captured struct {
	text    string
	stated  bool   // the person's words (a user message), not the assistant's
	message string // the transcript entry's uuid
}

// runHookCapture is phc hook capture, Claude Code's Stop hook: after a
// completion it proposes, under the app's own service token (PHC_TOKEN or
// --token-file), what the last turn selects for memory — lines of the
// person's message that begin "remember:" or "remember that" (reported:
// the person stated them), and <remember>…</remember> blocks of the
// assistant's answer (inferred) — never the transcript itself, with the
// session and message ids as evidence. Each becomes a proposal in the
// owner's review queue, used only once confirmed.
func runHookCapture(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "hook capture", &c)
	tokenFile := fs.String("token-file", "", "a file holding the app's write token (default: $PHC_TOKEN)")
	prefix := fs.String("key-prefix", "notes.claude_code", "the key prefix of what it proposes")
	app := fs.String("app", "claude-code", "the app it reports as (reported.app)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if !importer.ValidPrefix(*prefix) {
		return usageError("--key-prefix is a key: dot-separated segments of [a-z0-9_-]")
	}
	token := env.Getenv("PHC_TOKEN")
	if *tokenFile != "" {
		raw, err := os.ReadFile(*tokenFile)
		if err != nil {
			return err
		}
		token = strings.TrimSpace(string(raw))
	}
	if token == "" {
		return usageError("phc hook capture needs the app's write token: PHC_TOKEN, or --token-file FILE")
	}
	raw, err := io.ReadAll(io.LimitReader(env.Stdin, maxHookEvent+1))
	if err != nil {
		return err
	}
	var ev struct {
		SessionID      string `json:"session_id"`
		TranscriptPath string `json:"transcript_path"`
		StopHookActive bool   `json:"stop_hook_active"`
	}
	if len(raw) > maxHookEvent || json.Unmarshal(raw, &ev) != nil || ev.TranscriptPath == "" {
		return errors.New("phc hook capture reads a Stop hook's event (session_id, transcript_path) on standard input")
	}
	if ev.StopHookActive {
		return nil // a continuation of a turn already captured
	}
	picked, err := lastTurn(ev.TranscriptPath)
	if err != nil {
		return err
	}
	if len(picked) == 0 {
		return nil
	}
	cl, err := newClient(env, c, false)
	if err != nil {
		return err
	}
	cl.Token = token
	for _, p := range picked {
		in := custodian.ProposalInput{Key: *prefix + "." + importer.TextSegment(p.text), Kind: "fact", Assertion: "inferred",
			Reported: map[string]string{"app": *app}}
		if p.stated {
			in.Assertion = "reported"
		}
		if ev.SessionID != "" {
			in.Reported["run_id"] = importer.Clip(ev.SessionID, 256)
			in.Evidence = append(in.Evidence, custodian.Evidence{Ref: importer.Ref(*app, "session", importer.Clip(ev.SessionID, 256))})
		}
		if p.message != "" {
			in.Evidence = append(in.Evidence, custodian.Evidence{Ref: importer.Ref(*app, "message", importer.Clip(p.message, 256))})
		}
		if in.Value, err = json.Marshal(p.text); err != nil {
			return err
		}
		if importer.HasCredential(p.text) {
			fmt.Fprintf(env.Stderr, "phc hook capture: left out a statement that holds a credential (message %s)\n", printable(p.message))
			continue
		}
		out, err := cl.Propose(ctx, in)
		if err != nil {
			return fmt.Errorf("propose %s: %w", in.Key, err)
		}
		fmt.Fprintf(env.Stderr, "phc: proposed %s (%s) for the owner's review\n", printable(in.Key), out.ProposalID)
	}
	return nil
}

// lastTurn reads a Claude Code transcript (JSON lines) and returns what
// its last turn selects: from the last user message with text, its
// remember lines; from the assistant's messages after it, their
// <remember> blocks. The transcript is streamed; only the last turn is
// kept.
func lastTurn(path string) ([]captured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type entry struct {
		Type    string `json:"type"`
		UUID    string `json:"uuid"`
		Message struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	var turn []captured
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, long, err := readLine(r, maxTranscriptRow)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		var e entry
		if !long && len(line) > 0 && json.Unmarshal(line, &e) == nil {
			text := contentText(e.Message.Content)
			switch {
			case e.Type == "user" && e.Message.Role == "user" && text != "":
				turn = turn[:0] // a new turn begins
				for _, m := range rememberLine.FindAllStringSubmatch(text, -1) {
					turn = append(turn, captured{text: m[1], stated: true, message: e.UUID})
				}
			case e.Type == "assistant":
				for _, m := range rememberBlock.FindAllStringSubmatch(text, -1) {
					turn = append(turn, captured{text: m[1], message: e.UUID})
				}
			}
		}
		if err != nil {
			break
		}
	}
	var out []captured
	for _, c := range turn {
		if c.text = strings.TrimSpace(c.text); c.text != "" && len(c.text) <= maxCapturedText && len(out) < maxCaptured {
			out = append(out, c)
		}
	}
	return out, nil
}

// readLine reads one line of r (without its newline), or reports it long
// (and skips it) when it is over max bytes.
func readLine(r *bufio.Reader, max int) (line []byte, long bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !long && len(line)+len(chunk) <= max {
			line = append(line, chunk...)
		} else {
			long, line = true, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, long, err
		}
	}
}

// contentText is the text of a message's content: a string, or the text
// parts of a list of parts (tool calls and results are not text).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
