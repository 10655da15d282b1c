package importer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/quarantine"
)

// Memory is one record of another memory system, as a [Source] read it.
type Memory struct {
	// SourceID is the record's id in the source ("" if it has none).
	SourceID string
	// Text is what the memory says: the claim's value.
	Text string
	// Category is the source's category, tag, block label or relation
	// the key is mapped from ("" if none).
	Category string
	// Kind is the claim kind the source's material maps to (fact,
	// preference, goal, commitment, relationship, correction); "" is fact.
	Kind string
	// Stated is true only when the source says the person stated it: a
	// user-role message, attributed_to user, custom instructions, a file
	// the person wrote. Otherwise the memory is an inference of the
	// source's.
	Stated bool
	// Agent names the source's agent or assistant that kept it, if any.
	Agent string
	// Refs are the source's ids worth keeping as evidence: the
	// conversation, the message, the user, the app (each as
	// "<source>:<what>/<id>", see [Memory.Ref]).
	Refs []string
	// At is when the source recorded it (zero: unknown); RawTime is the
	// source's own writing of it.
	At      time.Time
	RawTime string
	// State is the source's state of the memory when it is not plainly in
	// use: paused, archived or deleted. It is kept as evidence, and the
	// owner sees it before adopting.
	State string
	// Candidate marks a statement split out of a prose dump (a memory a
	// model printed on request), not a record the source kept as one.
	Candidate bool
}

// Ref is the evidence ref naming what of source (conversation, message,
// user, memory, …) has id.
func Ref(source, what, id string) string { return source + ":" + what + "/" + id }

// validKind lists the claim kinds of the binding.
var validKind = map[string]bool{"fact": true, "preference": true, "goal": true, "commitment": true,
	"relationship": true, "correction": true}

// segment is what a key segment may hold; slug makes one of any text.
var nonSegment = regexp.MustCompile(`[^a-z0-9_-]+`)

// slug is text as a key segment: lower case, [a-z0-9_-], at most 64
// bytes, starting with a letter or digit ("misc" if nothing is left).
func slug(text string) string {
	s := nonSegment.ReplaceAllString(strings.ToLower(text), "_")
	s = strings.Trim(s, "_-")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "_-")
	}
	if s == "" {
		return "misc"
	}
	return s
}

// Claim is m as the binding document of a claim's only version, held from
// source under key: produced by the owner who imports it, reported by the
// source, unconfirmed. now stands for a missing time.
func (m Memory) Claim(source, key string, now time.Time) (quarantine.Claim, error) {
	id, err := identity.NewID("clm_")
	if err != nil {
		return quarantine.Claim{}, err
	}
	kind := m.Kind
	if !validKind[kind] {
		kind = "fact"
	}
	assertion := "inferred"
	if m.Stated {
		assertion = "reported"
	}
	at := m.At.UTC()
	if m.At.IsZero() {
		at = now.UTC()
	}
	evidence := []map[string]string{}
	add := func(ref string) {
		if ref != "" && len(evidence) < 32 && len(ref) <= 2048 {
			evidence = append(evidence, map[string]string{"ref": ref})
		}
	}
	if m.SourceID != "" {
		add(Ref(source, "memory", m.SourceID))
	}
	for _, r := range m.Refs {
		add(r)
	}
	if m.RawTime != "" && m.RawTime != at.Format(time.RFC3339Nano) {
		add(Ref(source, "time", m.RawTime))
	}
	if m.State != "" {
		add(Ref(source, "state", m.State))
	}
	if m.Candidate {
		add(Ref(source, "candidate", "split from a prose dump"))
	}
	reported := map[string]string{"app": source}
	if m.Agent != "" {
		reported["agent"] = Clip(m.Agent, 256)
	}
	doc := map[string]any{
		"id": id, "version": 1, "key": key, "value": m.Text, "subject": "self", "kind": kind,
		"assertion": assertion, "confirmation": map[string]string{"status": "unconfirmed"},
		"producer": map[string]any{"authenticated": map[string]string{"kind": "owner", "id": "owner"}, "reported": reported},
		"evidence": evidence, "recorded_at": at.Format(time.RFC3339Nano), "valid_from": at.Format(time.RFC3339Nano),
		"sensitivity": "standard", "restrictions": []any{}, "status": "quarantined", "written_by": "user",
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return quarantine.Claim{}, fmt.Errorf("memory %s: %w", m.SourceID, err)
	}
	return quarantine.Claim{ID: id, Personas: []string{}, Versions: []json.RawMessage{raw}}, nil
}

// Clip is s cut to at most n bytes, on a rune boundary.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
