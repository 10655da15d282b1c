package custodian

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// declaredKinds parses errors.go and returns the names of the Kind constants
// in declaration order, so that a Kind added without a row is caught even
// though Kinds() is derived from the table.
func declaredKinds(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("internal", "model", "errors.go"), nil, 0)
	if err != nil {
		t.Fatalf("parse errors.go: %v", err)
	}
	var names []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		inKind := false
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); ok {
				inKind = id.Name == "Kind"
			}
			if !inKind {
				continue
			}
			for _, n := range vs.Names {
				names = append(names, n.Name)
			}
		}
	}
	return names
}

func TestEveryKindHasARow(t *testing.T) {
	names := declaredKinds(t)
	ks := model.Kinds()
	if len(names) != len(ks) {
		t.Fatalf("errors.go declares %d Kinds %v, but Kinds() has %d rows", len(names), names, len(ks))
	}
	for i, k := range ks {
		if int(k) != i {
			t.Errorf("Kinds()[%d] = %d; want %d (value order)", i, k, i)
		}
		row := k.Row()
		if row.Status < 400 || row.Status > 599 {
			t.Errorf("%s: Row().Status = %d; want a 4xx or 5xx status", names[i], row.Status)
		}
		if row.Constraint == "" || row.Message == "" {
			t.Errorf("%s: Row() = %+v; want a constraint and a message", names[i], row)
		}
		if k.String() != row.Constraint {
			t.Errorf("%s.String() = %q; want %q", names[i], k.String(), row.Constraint)
		}
	}
	// A Kind beyond the table reads as internal, never as a zero row.
	beyond := Kind(len(ks))
	if got, want := beyond.Row(), KindInternal.Row(); got != want {
		t.Errorf("Kind(%d).Row() = %+v; want %+v", beyond, got, want)
	}
}

// TestKindRowsFollowDesign pins each Kind to the row docs/design.md §6 gives it.
func TestKindRowsFollowDesign(t *testing.T) {
	want := map[Kind]struct {
		status     int
		constraint string
	}{
		KindInternal:              {500, "internal"},
		KindInvalid:               {400, "invalid_request"},
		KindSchema:                {400, "schema_violation"},
		KindUnauthenticated:       {401, "unauthenticated"},
		KindLocked:                {403, "vault_locked"},
		KindSessionRequired:       {403, "session_required"},
		KindUserOnlyWrite:         {403, "user_only_write"},
		KindScopeExceeded:         {403, "scope_exceeded"},
		KindApprovalDenied:        {403, "approval_denied"},
		KindApprovalRequired:      {403, "approval_required"},
		KindModeDenied:            {403, "mode_denied"},
		KindRestrictionBlocked:    {403, "restriction_blocked"},
		KindQualificationRequired: {403, "qualification_required"},
		KindNotFound:              {404, "not_found"},
		KindConflict:              {409, "conflict"},
		KindTooLarge:              {413, "too_large"},
		KindRateLimited:           {429, "rate_limited"},
		KindMethodNotAllowed:      {405, "invalid_request"},
		// The Client-Vault v=1 table (docs/formats/reference.md).
		KindVaultBadRequest:  {400, "bad_request"},
		KindVaultUnknownKey:  {401, "unknown_key"},
		KindVaultPending:     {403, "pending"},
		KindVaultClockSkew:   {403, "clock_skew"},
		KindVaultUnknownRef:  {404, "unknown_ref"},
		KindVaultExpired:     {410, "expired"},
		KindVaultTooManyRefs: {413, "too_many_refs"},
		KindVaultDisabled:    {503, "disabled"},
		KindPurposeRequired:  {403, "purpose_required"},
	}
	for _, k := range model.Kinds() {
		w, ok := want[k]
		if !ok {
			t.Errorf("Kind %d (%s) has no expected row in this test; add one", k, k)
			continue
		}
		if row := k.Row(); row.Status != w.status || row.Constraint != w.constraint {
			t.Errorf("Kind(%d).Row() = %d %q; want %d %q", k, row.Status, row.Constraint, w.status, w.constraint)
		}
	}
}

type goldenRow struct {
	Kind       int    `json:"kind"`
	Status     int    `json:"status"`
	Constraint string `json:"constraint"`
	Message    string `json:"message"`
}

// TestErrorTableGolden compares the whole table with testdata/errors.golden.json.
// Regenerate with: go test ./custodian/ -run TestErrorTableGolden -update
func TestErrorTableGolden(t *testing.T) {
	var rows []goldenRow
	for _, k := range model.Kinds() {
		r := k.Row()
		rows = append(rows, goldenRow{int(k), r.Status, r.Constraint, r.Message})
	}
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("  ")
		buf.Write(line)
		if i < len(rows)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("]\n")
	path := filepath.Join("testdata", "errors.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("error table differs from %s (-golden +now); if intended, rerun with -update:\n%s", path, diff)
	}
}

func TestKindOf(t *testing.T) {
	nf := &Error{Op: "claim.get", Kind: KindNotFound}
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"nil", nil, KindInternal},
		{"plain error", errors.New("boom"), KindInternal},
		{"bare *Error", nf, KindNotFound},
		{"wrapped once", fmt.Errorf("adapter: %w", nf), KindNotFound},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", nf)), KindNotFound},
		{"joined", errors.Join(errors.New("other"), nf), KindNotFound},
		{"outermost wins", &Error{Op: "x", Kind: KindConflict, Err: nf}, KindConflict},
		{"wrapped outermost wins", fmt.Errorf("a: %w", &Error{Kind: KindLocked, Err: nf}), KindLocked},
		{"fail", model.Fail("op", KindSessionRequired, ""), KindSessionRequired},
		{"wrap", model.Wrap("op", KindInternal, errors.New("disk")), KindInternal},
		{"notFound", model.NotFound("op"), KindNotFound},
		{"internalf", model.Internalf("op", "x %d", 1), KindInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := model.KindOf(tt.err); got != tt.want {
				t.Errorf("KindOf(%v) = %s; want %s", tt.err, got, tt.want)
			}
		})
	}
}

func TestErrorUnwrapAndText(t *testing.T) {
	cause := errors.New("disk on fire")
	e := model.Wrap("commit", KindInternal, cause)
	if !errors.Is(e, cause) {
		t.Errorf("errors.Is(wrap(..., cause), cause) = false; want true")
	}
	if got := e.Error(); !strings.Contains(got, "commit") || !strings.Contains(got, "disk on fire") {
		t.Errorf("Error() = %q; want the op and the cause (log text)", got)
	}
	if got, want := e.Message(), "internal error"; got != want {
		t.Errorf("Message() = %q; want %q", got, want)
	}
	if got, want := model.Fail("x", KindConflict, "the vault is already unlocked").Message(), "the vault is already unlocked"; got != want {
		t.Errorf("Message() with Public = %q; want %q", got, want)
	}
	if got, want := model.NotFound("x").Message(), KindNotFound.Row().Message; got != want {
		t.Errorf("notFound Message() = %q; want %q", got, want)
	}
}

// TestMessageNeverHoldsCause checks that the client-facing text of errors the
// package builds never repeats the private cause (Err), and never quotes
// untrusted input.
func TestMessageNeverHoldsCause(t *testing.T) {
	v, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{schema: v}
	const marker = "ssn_123_45_6789"
	big := []byte(`{"key":"a","value":"` + strings.Repeat("x", 2<<20) + `","kind":"fact","assertion":"reported"}`)
	var in ConfirmInput
	tests := []struct {
		name string
		err  error
	}{
		{"wrap", model.Wrap("commit", KindInternal, errors.New("secret cause "+marker))},
		{"internalf", model.Internalf("journal", "state %s", marker)},
		{"decodeStrict unknown field", model.DecodeStrict("confirm", []byte(`{"`+marker+`": 1}`), &in)},
		{"decodeStrict syntax error", model.DecodeStrict("confirm", []byte(`{"personas": [`), &in)},
		{"decodeStrict wrong type", model.DecodeStrict("confirm", []byte(`{"personas": "`+marker+`"}`), &in)},
		{"decodeStrict duplicate", model.DecodeStrict("confirm", []byte(`{"personas": [], "personas": []}`), &in)},
		{"decodeStrict too large", model.DecodeStrict("confirm", big, &in)},
		{"decodeDoc syntax error", model.DecodeDoc(s.schema, "propose", schema.Proposal, []byte(`{"key": `+marker), &ProposalInput{})},
		{"decodeDoc too large", model.DecodeDoc(s.schema, "propose", schema.Proposal, big, &ProposalInput{})},
		{"decodeDoc schema", model.DecodeDoc(s.schema, "propose", schema.Proposal, []byte(`{"key":"A","value":"`+marker+`","kind":"x","assertion":"y","`+marker+`":1}`), &ProposalInput{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := errors.AsType[*Error](tt.err)
			if !ok {
				t.Fatalf("error = %v (%T); want an *Error", tt.err, tt.err)
			}
			msg := e.Message()
			if msg == "" {
				t.Errorf("Message() is empty")
			}
			if e.Err != nil && strings.Contains(msg, e.Err.Error()) {
				t.Errorf("Message() = %q; it contains the private cause %q", msg, e.Err.Error())
			}
			if strings.Contains(msg, marker) {
				t.Errorf("Message() = %q; it quotes untrusted input %q", msg, marker)
			}
			for _, vi := range e.Violations {
				if strings.Contains(vi.Message, marker) {
					t.Errorf("violation %+v quotes untrusted input", vi)
				}
			}
		})
	}
}
