package custodian_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/httpapi"
)

// TestTraversalDisclosesOnlyWhatGrantsAllow is the property test of issue 4:
// random people, name claims, relationships (some corrected, some deleted)
// and grants; for every recipient, start node, depth and page size, the
// traversal over HTTP returns exactly what a brute-force oracle computes
// from the model — an edge only when its claim and both ends are visible —
// and a hidden start node answers byte for byte as an absent one.
//
// One service serves every run (an unlock costs an Argon2id run); each run
// keeps to its own keys, consumers and entities.
func TestTraversalDisclosesOnlyWhatGrantsAllow(t *testing.T) {
	ts := newTestService(t)
	if _, _, err := ts.PutSettings(t.Context(), ts.owner, input[custodian.SettingsInput](ts, []byte(`{"reads_per_minute": 10000000, "writes_per_minute": 10000000}`))); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(ts.Service, nil))
	t.Cleanup(srv.Close)
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		m := newGraphModel(rt, ts, run)
		m.build()
		for _, rc := range m.recipients {
			for _, start := range append(append([]string{}, m.people...), absentEntity) {
				for depth := 1; depth <= 3; depth++ {
					m.checkTraversal(srv.URL, rc, start, depth)
				}
			}
		}
	})
}

const absentEntity = "ent_AAAAAAAAAAAAAAAAAAAAAAAAAA"

type modelClaim struct {
	id, key, subject string
	sensitivity      string
	version          int
	deleted          bool
	rel              *struct{ from, to, relation string }
}

type modelRecipient struct {
	name, token string
	patterns    []string
}

type graphModel struct {
	rt         *rapid.T
	ts         *testService
	prefix     string
	people     []string
	claims     []*modelClaim
	recipients []modelRecipient
}

func newGraphModel(rt *rapid.T, ts *testService, run int) *graphModel {
	return &graphModel{rt: rt, ts: ts, prefix: fmt.Sprintf("p%d", run)}
}

func (m *graphModel) key(cat string) string {
	sub := rapid.SampledFrom([]string{"a", "b"}).Draw(m.rt, "sub")
	return fmt.Sprintf("%s.%s.%s.n%d", m.prefix, cat, sub, len(m.claims))
}

func (m *graphModel) build() {
	rt, ts := m.rt, m.ts
	ctx := ts.t.Context()
	tiers := []string{"public", "standard", "sensitive"}
	for i, n := 0, rapid.IntRange(2, 7).Draw(rt, "people"); i < n; i++ {
		doc := map[string]any{"type": "person"}
		var c *modelClaim
		if rapid.IntRange(0, 4).Draw(rt, "named") > 0 {
			c = &modelClaim{key: m.key(rapid.SampledFrom([]string{"people", "private"}).Draw(rt, "namecat")),
				sensitivity: rapid.SampledFrom(tiers).Draw(rt, "nametier"), version: 1}
			doc["name"], doc["key"], doc["sensitivity"] = "Person "+c.key, c.key, c.sensitivity
		}
		out, err := ts.CreateEntity(ctx, ts.owner, input[custodian.EntityInput](ts, mustJSON(ts.t, doc)))
		if err != nil {
			rt.Fatalf("CreateEntity: %v", err)
		}
		m.people = append(m.people, out.Entity.ID)
		if c != nil {
			c.id, c.subject = out.Claim.ID, out.Entity.ID
			m.claims = append(m.claims, c)
		}
	}
	relations := []string{"friend", "colleague", "sibling"}
	for i, n := 0, rapid.IntRange(0, 14).Draw(rt, "relationships"); i < n; i++ {
		c := &modelClaim{key: m.key(rapid.SampledFrom([]string{"rel", "private"}).Draw(rt, "relcat")),
			sensitivity: rapid.SampledFrom(tiers).Draw(rt, "reltier"), version: 1, subject: "self"}
		c.rel = &struct{ from, to, relation string }{
			rapid.SampledFrom(m.people).Draw(rt, "from"), rapid.SampledFrom(m.people).Draw(rt, "to"),
			rapid.SampledFrom(relations).Draw(rt, "relation"),
		}
		pr := ts.mustPropose(ts.owner, proposal(ts.t, c.key, map[string]string{"from": c.rel.from, "to": c.rel.to, "relation": c.rel.relation},
			map[string]any{"kind": "relationship", "sensitivity": c.sensitivity}))
		c.id = ts.mustConfirm(pr.ProposalID).Claim.ID
		m.claims = append(m.claims, c)
		switch rapid.IntRange(0, 5).Draw(rt, "fate") {
		case 0:
			if _, err := ts.DeleteClaim(ctx, ts.owner, c.id); err != nil {
				rt.Fatalf("DeleteClaim: %v", err)
			}
			c.deleted = true
		case 1:
			c.rel.to = rapid.SampledFrom(m.people).Draw(rt, "newto")
			c.rel.relation = rapid.SampledFrom(relations).Draw(rt, "newrelation")
			body := mustJSON(ts.t, map[string]any{"value": map[string]string{"from": c.rel.from, "to": c.rel.to, "relation": c.rel.relation}})
			if _, err := ts.Correct(ctx, ts.owner, c.id, input[custodian.CorrectionInput](ts, body)); err != nil {
				rt.Fatalf("Correct: %v", err)
			}
			c.version = 2
		}
	}
	patterns := []string{m.prefix + ".people.*", m.prefix + ".rel.*", m.prefix + ".rel.a.*", m.prefix + ".private.*", m.prefix + ".*", m.prefix + ".people.b.*"}
	for i, n := 0, rapid.IntRange(1, 3).Draw(rt, "recipients"); i < n; i++ {
		r := modelRecipient{name: fmt.Sprintf("%s-r%d", m.prefix, i)}
		r.patterns = rapid.SliceOfNDistinct(rapid.SampledFrom(patterns), 0, 3, rapid.ID[string]).Draw(rt, "patterns")
		ts.mustConsumer(r.name)
		r.token = ts.mustToken(r.name, "*", "read")
		if len(r.patterns) > 0 {
			ts.mustGrant(grantSpec{recipient: r.name, purpose: "assist", ops: []string{"read"}, keys: r.patterns})
		}
		m.recipients = append(m.recipients, r)
	}
}

// The oracle: the rules of docs/design.md §5 written out plainly over the model.
func (r modelRecipient) sees(c *modelClaim) bool {
	if c.deleted || c.sensitivity == "sensitive" {
		return false
	}
	for _, p := range r.patterns {
		if strings.HasPrefix(c.key, strings.TrimSuffix(p, "*")) {
			return true
		}
	}
	return false
}

func (m *graphModel) nodeVisible(r modelRecipient, n string) bool {
	for _, c := range m.claims {
		if c.subject == n && r.sees(c) {
			return true
		}
	}
	return false
}

type oracleEdge struct {
	Edge  string `json:"edge"`
	From  string `json:"from"`
	To    string `json:"to"`
	Rel   string `json:"relation"`
	Depth int    `json:"depth"`
}

func (m *graphModel) expected(r modelRecipient, start string, depth int) []oracleEdge {
	var edges []*modelClaim
	for _, c := range m.claims {
		if c.rel != nil && r.sees(c) && m.nodeVisible(r, c.rel.from) && m.nodeVisible(r, c.rel.to) {
			edges = append(edges, c)
		}
	}
	ref := func(c *modelClaim) string { return fmt.Sprintf("%s@%d", c.id, c.version) }
	sort.Slice(edges, func(i, j int) bool { return ref(edges[i]) < ref(edges[j]) })
	seen := map[string]bool{start: true}
	done := map[string]bool{}
	frontier := []string{start}
	out := []oracleEdge{}
	for d := 1; d <= depth; d++ {
		var next []string
		for _, n := range frontier {
			for _, c := range edges {
				if done[c.id] || (c.rel.from != n && c.rel.to != n) {
					continue
				}
				done[c.id] = true
				out = append(out, oracleEdge{ref(c), c.rel.from, c.rel.to, c.rel.relation, d})
				other := c.rel.to
				if other == n {
					other = c.rel.from
				}
				if !seen[other] {
					seen[other] = true
					next = append(next, other)
				}
			}
		}
		frontier = next
	}
	return out
}

func get(rt *rapid.T, url, token string) (int, []byte) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rt.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func (m *graphModel) checkTraversal(base string, r modelRecipient, start string, depth int) {
	rt := m.rt
	path := fmt.Sprintf("%s/phc/v1/graph/neighbors/%s?purpose=assist&depth=%d", base, start, depth)
	if !m.nodeVisible(r, start) {
		status, body := get(rt, path, r.token)
		absStatus, absBody := get(rt, fmt.Sprintf("%s/phc/v1/graph/neighbors/%s?purpose=assist&depth=%d", base, absentEntity, depth), r.token)
		if status != 404 || status != absStatus || !bytes.Equal(body, absBody) {
			rt.Fatalf("hidden %s for %s: %d %s; absent: %d %s", start, r.name, status, body, absStatus, absBody)
		}
		return
	}
	want := m.expected(r, start, depth)
	limit := rapid.IntRange(1, 6).Draw(rt, "limit")
	var got []oracleEdge
	cursor := ""
	for pages := 0; ; pages++ {
		status, body := get(rt, path+fmt.Sprintf("&limit=%d&cursor=%s", limit, cursor), r.token)
		if status != 200 {
			rt.Fatalf("neighbors of %s for %s: %d %s", start, r.name, status, body)
		}
		var page struct {
			Edges      []oracleEdge `json:"edges"`
			NextCursor string       `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			rt.Fatal(err)
		}
		if len(page.Edges) > limit {
			rt.Fatalf("page of %d edges over the limit %d", len(page.Edges), limit)
		}
		got = append(got, page.Edges...)
		if page.NextCursor == "" {
			break
		}
		if pages > 100 {
			rt.Fatal("pagination does not end")
		}
		cursor = page.NextCursor
	}
	if got == nil {
		got = []oracleEdge{}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		rt.Fatalf("neighbors of %s, depth %d, for %s (patterns %v):\n got %v\nwant %v", start, depth, r.name, r.patterns, got, want)
	}
}
