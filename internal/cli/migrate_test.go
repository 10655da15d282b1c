package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMigrationBetweenDaemons is the migration issue's first acceptance
// over real HTTP and the CLI, as docs/migration.md tells it: A exports to B's
// card; B, having pinned A's, imports; before adoption no recipient of B —
// even one with a grant on * — reads anything of it; after adopt --all B's
// owner sees A's claims field by field (versions, personas, restrictions),
// none of A's grants, consumers or tokens exists on B, and B's recipient
// reads what B's grant covers.
func TestMigrationBetweenDaemons(t *testing.T) {
	t.Parallel()
	a := startHarness(t, "")
	b := startHarness(t, "")
	envA, _, errA := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": a.dir})
	envB, outB, errB := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": b.dir})
	dir := t.TempDir()
	cardA, cardB, bundle := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "bundle.jwe")
	run := func(env *Env, errb fmt.Stringer, args ...string) {
		t.Helper()
		if code := Run(t.Context(), env, args); code != 0 {
			t.Fatalf("phc %s = %d\n%s", strings.Join(args, " "), code, errb.String())
		}
	}
	run(envA, errA, "card", "--out", cardA)
	run(envB, errB, "card", "--out", cardB)
	run(envB, errB, "trust", "custodian", cardA)

	// A's vault: a persona, a claim with two versions, one with a
	// restriction that travels, one that must stay; an app with a grant.
	a.must(201, "POST", "/phc/v1/personas", a.owner, map[string]any{"id": "work", "name": "Work"}, nil)
	confirm := func(key string, value any, restrictions []any) string {
		var pr struct {
			ID string `json:"proposal_id"`
		}
		a.must(201, "POST", "/phc/v1/proposals", a.owner, map[string]any{"key": key, "value": value, "kind": "preference",
			"assertion": "reported", "restrictions": restrictions}, &pr)
		var w struct {
			Claim struct {
				ID string `json:"id"`
			} `json:"claim"`
		}
		a.must(200, "POST", "/phc/v1/proposals/"+pr.ID+"/confirm", a.owner, map[string]any{"personas": []string{"work"}}, &w)
		return w.Claim.ID
	}
	k0 := confirm("work.lang", "Go", []any{})
	a.must(200, "PUT", "/phc/v1/claims/"+k0, a.owner, map[string]any{"value": "Go and Rust"}, nil)
	confirm("work.tools", []string{"vim", "make"}, []any{map[string]any{"type": "purpose_only", "mandatory": true, "params": map[string]any{"purposes": []string{"assist"}}}})
	confirm("work.salary", 100, []any{map[string]any{"type": "no_export", "mandatory": true}})
	var sum struct {
		Summary struct {
			ID string `json:"id"`
		} `json:"summary"`
	}
	a.must(201, "POST", "/phc/v1/summaries", a.owner, map[string]any{"value": "knows Go and Rust", "derived_from": []string{k0 + "@2"}}, &sum)
	a.consumer("tutor", "*", "read")
	a.grant("tutor", "assist", "read", map[string]any{"keys": []string{"work.*"}})

	// B's app may read everything B's owner grants: all of it.
	app := b.consumerFor("app", "*", "read", "assist")
	b.grant("app", "assist", "read", map[string]any{"keys": []string{"*"}})

	run(envA, errA, "export", "--to", cardB, "--out", bundle)
	run(envB, errB, "import", bundle)
	if !strings.Contains(outB.String(), "4 records held") { // two claims, the summary and the persona
		t.Fatalf("phc import said:\n%s", outB.String())
	}
	// The owner sees what each record would be adopted with.
	outB.Reset()
	run(envB, errB, "quarantine")
	if !strings.Contains(outB.String(), "(work.tools), tier standard, restricted purpose_only\n") || !strings.Contains(outB.String(), "(work.lang), tier standard\n") {
		t.Fatalf("phc quarantine said:\n%s", outB.String())
	}
	// Held: nothing reads as present to B's app, by any route.
	b.constraint(404, "not_found", "GET", "/context/fields/work.lang", app, nil)
	var ctx struct {
		Categories map[string][]any `json:"categories"`
	}
	b.must(200, "GET", "/context/context", app, nil, &ctx)
	if len(ctx.Categories) != 0 {
		t.Fatalf("B's app reads held records: %v", ctx.Categories)
	}
	var fields struct {
		Fields []any `json:"fields"`
	}
	b.must(200, "GET", "/context/fields", app, nil, &fields)
	if len(fields.Fields) != 0 {
		t.Fatalf("B's app lists held records: %v", fields.Fields)
	}

	run(envB, errB, "quarantine", "adopt", "--all")
	for _, key := range []string{"work.lang", "work.tools"} {
		var la, lb struct {
			Claims []map[string]any `json:"claims"`
		}
		a.must(200, "GET", "/phc/v1/claims?key="+key, a.owner, nil, &la)
		b.must(200, "GET", "/phc/v1/claims?key="+key, b.owner, nil, &lb)
		if len(la.Claims) != 1 || len(lb.Claims) != 1 {
			t.Fatalf("%s: A has %d, B %d", key, len(la.Claims), len(lb.Claims))
		}
		ca, cb := la.Claims[0], lb.Claims[0]
		for _, f := range []string{"id", "version", "key", "value", "subject", "kind", "assertion", "sensitivity", "restrictions", "personas", "recorded_at"} {
			if !reflect.DeepEqual(ca[f], cb[f]) {
				t.Errorf("%s.%s: A %v, B %v", key, f, ca[f], cb[f])
			}
		}
		var na, nb struct {
			Versions []map[string]any `json:"claims"`
		}
		a.must(200, "GET", "/phc/v1/claims/"+ca["id"].(string)+"/versions", a.owner, nil, &na)
		b.must(200, "GET", "/phc/v1/claims/"+ca["id"].(string)+"/versions", b.owner, nil, &nb)
		if len(na.Versions) != len(nb.Versions) || len(na.Versions) == 0 {
			t.Fatalf("%s versions: A %d, B %d", key, len(na.Versions), len(nb.Versions))
		}
		for i := range na.Versions {
			if !reflect.DeepEqual(na.Versions[i]["value"], nb.Versions[i]["value"]) {
				t.Errorf("%s version %d: A %v, B %v", key, i+1, na.Versions[i]["value"], nb.Versions[i]["value"])
			}
		}
	}
	// The summary arrives with its lineage.
	var sa, sb map[string]any
	a.must(200, "GET", "/phc/v1/summaries/"+sum.Summary.ID, a.owner, nil, &sa)
	b.must(200, "GET", "/phc/v1/summaries/"+sum.Summary.ID, b.owner, nil, &sb)
	for _, f := range []string{"value", "derived_from", "status", "restrictions", "sensitivity", "version"} {
		if !reflect.DeepEqual(sa["summary"].(map[string]any)[f], sb["summary"].(map[string]any)[f]) {
			t.Errorf("summary.%s: A %v, B %v", f, sa["summary"].(map[string]any)[f], sb["summary"].(map[string]any)[f])
		}
	}
	var salary struct {
		Claims []any `json:"claims"`
	}
	b.must(200, "GET", "/phc/v1/claims?key=work.salary", b.owner, nil, &salary)
	if len(salary.Claims) != 0 {
		t.Fatal("a no_export claim reached B")
	}
	var consumers struct {
		Consumers []struct {
			Name string `json:"name"`
		} `json:"consumers"`
	}
	b.must(200, "GET", "/context/consumers", b.owner, nil, &consumers)
	for _, c := range consumers.Consumers {
		if c.Name == "tutor" {
			t.Fatal("A's consumer exists on B")
		}
	}
	var grants struct {
		Grants []struct {
			Recipient struct {
				ID string `json:"id"`
			} `json:"recipient"`
		} `json:"grants"`
	}
	b.must(200, "GET", "/phc/v1/grants", b.owner, nil, &grants)
	for _, g := range grants.Grants {
		if g.Recipient.ID != "app" {
			t.Fatalf("a grant B's owner did not make: %+v", g)
		}
	}
	// B's grant on * now covers the adopted claims.
	b.must(200, "GET", "/context/fields/work.lang", app, nil, nil)
}

// TestMigrationInParts: phc export --part-claims writes a bundle in parts
// (a zip archive of separately sealed parts) that phc import holds whole.
func TestMigrationInParts(t *testing.T) {
	t.Parallel()
	a := startHarness(t, "")
	b := startHarness(t, "")
	envA, _, errA := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": a.dir})
	envB, outB, errB := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": b.dir})
	dir := t.TempDir()
	cardA, cardB, bundle := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "bundle.zip")
	run := func(env *Env, errb fmt.Stringer, args ...string) {
		t.Helper()
		if code := Run(t.Context(), env, args); code != 0 {
			t.Fatalf("phc %s = %d\n%s", strings.Join(args, " "), code, errb.String())
		}
	}
	run(envA, errA, "card", "--out", cardA)
	run(envB, errB, "card", "--out", cardB)
	run(envB, errB, "trust", "custodian", cardA)
	for i := range 5 {
		var pr struct {
			ID string `json:"proposal_id"`
		}
		a.must(201, "POST", "/phc/v1/proposals", a.owner, map[string]any{"key": fmt.Sprintf("work.item%d", i), "value": i, "kind": "fact", "assertion": "reported"}, &pr)
		a.must(200, "POST", "/phc/v1/proposals/"+pr.ID+"/confirm", a.owner, map[string]any{"personas": []string{}}, nil)
	}
	run(envA, errA, "export", "--to", cardB, "--part-claims", "2", "--out", bundle)
	if !strings.Contains(errA.String(), "in 3 parts, a zip archive") {
		t.Fatalf("phc export said:\n%s", errA)
	}
	run(envB, errB, "import", bundle)
	if !strings.Contains(outB.String(), "in parts: 5 records held") {
		t.Fatalf("phc import said:\n%s", outB)
	}
	outB.Reset()
	run(envB, errB, "quarantine", "adopt", "--all")
	var claims struct {
		Claims []json.RawMessage `json:"claims"`
	}
	b.must(200, "GET", "/phc/v1/claims?key=work.*", b.owner, nil, &claims)
	if len(claims.Claims) != 5 {
		t.Fatalf("claims on B after adopting the bundle in parts: %d; want 5", len(claims.Claims))
	}
}
