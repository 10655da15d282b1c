package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/quarantine"
	"github.com/phc-project/phc/quarantine/importer"
)

// TestValidate: phc validate checks, with no daemon, the documents phc
// itself makes — a record held in the quarantine as the daemon lists it,
// the records an import yields — and prints each violation of a bad one
// by path and keyword, exiting 1.
func TestValidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, v any) string {
		t.Helper()
		raw, ok := v.([]byte)
		if !ok {
			var err error
			if raw, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// A held record, as GET /phc/v1/quarantine lists it.
	h := startHarness(t, "")
	env, _, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	export := filepath.Join(repoRoot, "quarantine", "importer", "testdata", "mem0", "results.json")
	if code := Run(t.Context(), env, []string{"import", "--from", "mem0", export}); code != 0 {
		t.Fatalf("phc import = %d: %s", code, errb)
	}
	var page struct {
		Records []json.RawMessage `json:"records"`
	}
	h.must(200, "GET", "/phc/v1/quarantine", h.owner, nil, &page)
	if len(page.Records) == 0 {
		t.Fatal("nothing held")
	}
	held := write("held.json", []byte(page.Records[0]))

	// The records an import yields.
	raw, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	in := &importer.Input{Name: "x.json", R: strings.NewReader(string(raw)), Size: int64(len(raw)), Limits: importer.DefaultLimits}
	src, err := importer.Lookup("mem0", in)
	if err != nil {
		t.Fatal(err)
	}
	recs := quarantine.Records{Personas: []json.RawMessage{}, Entities: []json.RawMessage{}, Summaries: []json.RawMessage{}, Identities: []quarantine.IdentityRef{}}
	if _, err := importer.Run(context.Background(), src, in, nil, time.Now(), 100, func(r quarantine.Records) error {
		recs.Claims = append(recs.Claims, r.Claims...)
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	records := write("records.json", recs)
	claim := write("claim.json", []byte(recs.Claims[0].Versions[0]))

	badManifest := write("manifest.json", map[string]any{"bundle_version": "0.9", "bundle_id": "bnd_x", "created_at": "yesterday",
		"source": map[string]string{"custodian_id": "cus_x"}, "recipient": map[string]string{}, "counts": map[string]int{},
		"loss_report": []any{}, "records_digest": "sha256:00"})

	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"validate", held}, 0, []string{"a valid held"}},
		{[]string{"validate", records}, 0, []string{"a valid bundle_records"}},
		{[]string{"validate", claim}, 0, []string{"a valid claim"}},
		{[]string{"validate", "--as", "held", claim}, 1, []string{"not a valid held", "/bundle_id  required"}},
		{[]string{"validate", badManifest}, 1, []string{"not a valid bundle_manifest", "/bundle_version  enum", "/bundle_id  pattern",
			"/created_at  ", "/recipient/custodian_id  required", "/records_digest  pattern"}},
		{[]string{"validate", "--as", "nonsense", claim}, 2, []string{"--as is one of"}},
	}
	for _, tc := range tests {
		code, out, errs := runCmd(t, tc.args...)
		said := out + errs
		if code != tc.code {
			t.Errorf("phc %s = %d; want %d\n%s", strings.Join(tc.args, " "), code, tc.code, said)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(said, w) {
				t.Errorf("phc %s said:\n%s\nwant %q", strings.Join(tc.args, " "), said, w)
			}
		}
	}
}
