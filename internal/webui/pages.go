package webui

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian"
)

// invalid is a malformed form field, as the error table words it.
func invalid(pub string) error {
	return &custodian.Error{Op: "console", Kind: custodian.KindInvalid, Public: pub}
}

func mustJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain values are encoded here
	}
	return raw
}

// decode encodes doc, a body built from a form, into in as the API decodes
// a request body (custodian.Service.Decode). A refusal is no error here:
// in keeps it, and the core method given in answers it.
func (s *Server) decode(op string, doc any, in custodian.Input) {
	_ = s.svc.Decode(op, mustJSON(doc), in)
}

// formList is the non-empty values of a repeated form field.
func formList(r *http.Request, name string) []string {
	out := []string{}
	for _, v := range r.PostForm[name] {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// splitList splits a comma- or space-separated field.
func splitList(s string) []string {
	return append([]string{}, strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })...)
}

// jsonField reads a form field holding a JSON value; a bare word that is
// not JSON is taken as a string.
func jsonField(v string) json.RawMessage {
	v = strings.TrimSpace(v)
	if json.Valid([]byte(v)) {
		return json.RawMessage(v)
	}
	return mustJSON(v)
}

// ---- review ----

func (s *Server) review(w http.ResponseWriter, r *http.Request, sess *session) error {
	items, err := s.svc.Review(ctx(r), sess.p)
	if err != nil {
		return err
	}
	personas, err := s.svc.ListPersonas(ctx(r), sess.p)
	if err != nil {
		return err
	}
	names, err := s.entities(r, sess)
	if err != nil {
		return err
	}
	s.render(w, http.StatusOK, "review", sess, map[string]any{"Items": items, "Personas": personas, "Names": names})
	return nil
}

// confirm confirms the one proposal a row's button names (with its edited
// value, if any), or else every selected one, into the chosen personas.
func (s *Server) confirm(w http.ResponseWriter, r *http.Request, sess *session) error {
	personas := formList(r, "personas")
	if id := r.PostForm.Get("one"); id != "" {
		in := custodian.ConfirmInput{Personas: personas}
		if v := strings.TrimSpace(r.PostForm.Get("edit_" + id)); v != "" {
			in.Edits = &custodian.Edits{Value: jsonField(v)}
		}
		out, err := s.svc.Confirm(ctx(r), sess.p, id, in)
		if err != nil {
			return err
		}
		return s.done(w, r, sess, "/review", fmt.Sprintf("Confirmed %s as %s (version %d).", out.Claim.Key, out.Claim.ID, out.Claim.Version))
	}
	ids := formList(r, "ids")
	out, err := s.svc.ConfirmBulk(ctx(r), sess.p, custodian.BulkConfirmInput{IDs: ids, Personas: personas})
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/review", bulkMessage("Confirmed", out))
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request, sess *session) error {
	reason := r.PostForm.Get("reason")
	if id := r.PostForm.Get("one"); id != "" {
		if _, err := s.svc.Reject(ctx(r), sess.p, id, custodian.RejectInput{Reason: reason}); err != nil {
			return err
		}
		return s.done(w, r, sess, "/review", "Rejected 1 proposal.")
	}
	out, err := s.svc.RejectBulk(ctx(r), sess.p, custodian.BulkRejectInput{IDs: formList(r, "ids"), Reason: reason})
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/review", bulkMessage("Rejected", out))
}

func bulkMessage(verb string, out custodian.BulkDecision) string {
	msg := fmt.Sprintf("%s %d of %d proposals.", verb, out.Decided, len(out.Items))
	for _, it := range out.Items {
		if it.Constraint != "" {
			msg += fmt.Sprintf(" %s: %s.", it.ProposalID, it.Error)
		}
	}
	return msg
}

// ---- requests and apps ----

func (s *Server) requests(w http.ResponseWriter, r *http.Request, sess *session) error {
	reqs, err := s.svc.ListRequests(ctx(r), sess.p)
	if err != nil {
		return err
	}
	apps, err := s.svc.ListConsumers(ctx(r), sess.p)
	if err != nil {
		return err
	}
	var pending, decided []custodian.ContextRequest
	for _, q := range reqs {
		if q.Status == custodian.RequestPending {
			pending = append(pending, q)
		} else if len(decided) < 50 {
			decided = append(decided, q)
		}
	}
	s.render(w, http.StatusOK, "requests", sess, map[string]any{"Pending": pending, "Decided": decided, "Apps": apps})
	return nil
}

func (s *Server) approveRequest(w http.ResponseWriter, r *http.Request, sess *session) error {
	q, err := s.svc.DecideRequest(ctx(r), sess.p, r.PathValue("id"), true, custodian.DecisionInput{Password: r.PostForm.Get("password")})
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/requests", fmt.Sprintf("Approved the request of %s: grant %s.", q.Consumer, q.GrantID))
}

func (s *Server) denyRequest(w http.ResponseWriter, r *http.Request, sess *session) error {
	q, err := s.svc.DecideRequest(ctx(r), sess.p, r.PathValue("id"), false, custodian.DecisionInput{})
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/requests", "Denied the request of "+q.Consumer+".")
}

func (s *Server) approveApp(w http.ResponseWriter, r *http.Request, sess *session) error {
	c, err := s.svc.ApproveConsumer(ctx(r), sess.p, r.PathValue("name"))
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/requests", "Approved the app "+c.Name+".")
}

func (s *Server) removeApp(w http.ResponseWriter, r *http.Request, sess *session) error {
	name := r.PathValue("name")
	if !s.confirmed(w, r, sess, "Remove the app?", "Remove the app "+name+": every token of it is revoked and every grant naming it ends; registering again starts from nothing.", "Remove the app", "/requests") {
		return nil
	}
	if _, err := s.svc.DeleteConsumer(ctx(r), sess.p, r.PathValue("name")); err != nil {
		return err
	}
	return s.done(w, r, sess, "/requests", "Removed the app "+r.PathValue("name")+".")
}

// confirmed reports whether the form confirms an irreversible action (its
// confirm field is "yes"); if not, it renders the page that asks, whose
// form posts the same action again, confirmed. No script is involved.
func (s *Server) confirmed(w http.ResponseWriter, r *http.Request, sess *session, title, what, button, back string) bool {
	if r.PostForm.Get("confirm") == "yes" {
		return true
	}
	s.askConfirm(w, r, sess, title, what, button, back)
	return false
}

// askConfirm renders the confirmation page for the action r posted; back
// is the page to return to (under the session's path) when cancelled.
func (s *Server) askConfirm(w http.ResponseWriter, r *http.Request, sess *session, title, what, button, back string) {
	s.render(w, http.StatusOK, "confirm", sess, map[string]any{"Title": title, "What": what, "Button": button, "Action": r.URL.Path, "Back": sess.base + back})
}

// ---- grants ----

func (s *Server) grants(w http.ResponseWriter, r *http.Request, sess *session) error {
	gs, err := s.svc.ListGrants(ctx(r), sess.p)
	if err != nil {
		return err
	}
	apps, err := s.svc.ListConsumers(ctx(r), sess.p)
	if err != nil {
		return err
	}
	personas, err := s.svc.ListPersonas(ctx(r), sess.p)
	if err != nil {
		return err
	}
	now := s.now()
	type grantRow struct {
		custodian.Grant
		InForce bool
		Expires string // ExpiresAt as the narrow form's datetime-local shows it
	}
	rows := make([]grantRow, 0, len(gs))
	var recipients []string
	for _, g := range slices.Backward(gs) {
		in := g.RevokedAt == nil && g.SpentAt == nil && now.Before(g.ExpiresAt)
		rows = append(rows, grantRow{g, in, g.ExpiresAt.UTC().Format(formMinute)})
	}
	for _, a := range apps {
		recipients = append(recipients, a.Name)
	}
	var readable []custodian.Readable
	for _, name := range recipients {
		rd, err := s.svc.ReadableNow(ctx(r), sess.p, name)
		if err != nil {
			return err
		}
		readable = append(readable, rd)
	}
	issuers, err := s.svc.ListTrust(ctx(r), sess.p)
	if err != nil {
		return err
	}
	dec, err := s.svc.ListDECTrust(ctx(r), sess.p)
	if err != nil {
		return err
	}
	s.render(w, http.StatusOK, "grants", sess, map[string]any{
		"Grants": rows, "Apps": apps, "Personas": personas, "Readable": readable,
		"Issuers": issuers, "Policies": dec.Policies, "Categories": custodian.PurposeCategories, "Operations": custodian.Operations,
		"Expires": now.Add(30 * 24 * time.Hour).UTC().Format(formMinute),
	})
	return nil
}

func (s *Server) createGrant(w http.ResponseWriter, r *http.Request, sess *session) error {
	f := r.PostForm
	expires, err := time.ParseInLocation(formMinute, f.Get("expires_at"), time.UTC)
	if err != nil {
		return invalid("expires_at must be a date and time (UTC)")
	}
	ops := formList(r, "operations")
	sel := map[string][]string{}
	if keys := splitList(f.Get("keys")); len(keys) > 0 {
		sel["keys"] = keys
	}
	if ps := formList(r, "personas"); len(ps) > 0 {
		sel["personas"] = ps
	}
	recipient := map[string]string{"kind": "consumer", "id": f.Get("recipient")}
	if iss := f.Get("oidc_issuer"); iss != "" {
		recipient = map[string]string{"kind": "oidc", "issuer": iss, "id": strings.TrimSpace(f.Get("oidc_subject"))}
	}
	doc := map[string]any{
		"recipient":  recipient,
		"purpose":    f.Get("purpose"),
		"operations": ops,
		"selectors":  sel,
		"expires_at": expires.Format(time.RFC3339),
	}
	if u := f.Get("usage"); u != "" {
		doc["usage"] = u
	}
	if c := f.Get("purpose_category"); c != "" {
		doc["purpose_category"] = c
	}
	if d := f.Get("disclosure"); d != "" {
		doc["disclosure"] = d
	}
	if q := f.Get("requires"); q != "" {
		doc["requires"] = map[string]string{"qualification": q}
	}
	var in custodian.GrantInput
	s.decode("grant.create", doc, &in)
	out, err := s.svc.CreateGrant(ctx(r), sess.p, in)
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/grants", "Created grant "+out.ID+".")
}

// formMinute is the layout of a datetime-local input, read as UTC.
const formMinute = "2006-01-02T15:04"

// narrowGrant narrows a grant from its row's form. Each term the form shows
// is sent: the operations and personas left ticked and the key patterns
// typed replace the grant's (where the grant had no keys or personas, an
// empty field leaves them so); the expiry is sent only when the owner
// changed it, since the form shows it to the minute. The custodian refuses
// anything wider.
func (s *Server) narrowGrant(w http.ResponseWriter, r *http.Request, sess *session) error {
	f := r.PostForm
	sel := map[string][]string{}
	if keys := splitList(f.Get("keys")); len(keys) > 0 || f.Get("had_keys") != "" {
		sel["keys"] = keys
	}
	if ps := formList(r, "personas"); len(ps) > 0 || f.Get("had_personas") != "" {
		sel["personas"] = ps
	}
	doc := map[string]any{"operations": formList(r, "operations")}
	if len(sel) > 0 {
		doc["selectors"] = sel
	}
	if e := f.Get("expires_at"); e != "" && e != f.Get("expires_was") {
		at, err := time.ParseInLocation(formMinute, e, time.UTC)
		if err != nil {
			return invalid("expires_at must be a date and time (UTC)")
		}
		doc["expires_at"] = at.Format(time.RFC3339)
	}
	var in custodian.GrantTerms
	s.decode("grant.narrow", doc, &in)
	if _, err := s.svc.NarrowGrant(ctx(r), sess.p, r.PathValue("id"), in); err != nil {
		return err
	}
	return s.done(w, r, sess, "/grants", "Narrowed grant "+r.PathValue("id")+".")
}

func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request, sess *session) error {
	if _, err := s.svc.RevokeGrant(ctx(r), sess.p, r.PathValue("id")); err != nil {
		return err
	}
	return s.done(w, r, sess, "/grants", "Revoked grant "+r.PathValue("id")+".")
}

// ---- claims ----

func (s *Server) claims(w http.ResponseWriter, r *http.Request, sess *session) error {
	q := r.URL.Query()
	list, err := s.svc.ListClaims(ctx(r), sess.p, q.Get("key"), q.Get("persona"))
	if err != nil {
		return err
	}
	personas, err := s.svc.ListPersonas(ctx(r), sess.p)
	if err != nil {
		return err
	}
	names, err := s.entities(r, sess)
	if err != nil {
		return err
	}
	s.render(w, http.StatusOK, "claims", sess, map[string]any{"Claims": list.Claims, "Personas": personas, "Key": q.Get("key"), "Persona": q.Get("persona"), "Names": names})
	return nil
}

func (s *Server) claim(w http.ResponseWriter, r *http.Request, sess *session) error {
	id := r.PathValue("id")
	cur, err := s.svc.GetClaim(ctx(r), sess.p, id, "")
	if err != nil {
		return err
	}
	versions, err := s.svc.Versions(ctx(r), sess.p, id)
	if err != nil {
		return err
	}
	personas, err := s.svc.ListPersonas(ctx(r), sess.p)
	if err != nil {
		return err
	}
	sums, err := s.svc.ListSummaries(ctx(r), sess.p)
	if err != nil {
		return err
	}
	names, err := s.entities(r, sess)
	if err != nil {
		return err
	}
	pic := claimLineage(cur.Claim, versions.Claims, sums).under(sess.base)
	var hood *picture
	if cur.Claim.Status == custodian.StatusActive {
		n, err := s.svc.Traverse(ctx(r), sess.p, custodian.NeighborQuery{Node: cur.Claim.Subject, Depth: 1})
		switch {
		case err == nil:
			hood = neighbourhood(n, names).under(sess.base)
		case custodian.KindOf(err) != custodian.KindNotFound:
			return err
		}
	}
	slices.Reverse(versions.Claims)
	s.render(w, http.StatusOK, "claim", sess, map[string]any{
		"Claim": cur.Claim, "Versions": versions.Claims, "Personas": personas, "Lineage": pic, "Neighbourhood": hood, "Names": names,
	})
	return nil
}

func (s *Server) correct(w http.ResponseWriter, r *http.Request, sess *session) error {
	id := r.PathValue("id")
	doc := map[string]any{"value": jsonField(r.PostForm.Get("value"))}
	if t := r.PostForm.Get("sensitivity"); t != "" {
		doc["sensitivity"] = t
	}
	var in custodian.CorrectionInput
	s.decode("claim.correct", doc, &in)
	out, err := s.svc.Correct(ctx(r), sess.p, id, in)
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/claims/"+url.PathEscape(id), fmt.Sprintf("Corrected: version %d.", out.Claim.Version))
}

func (s *Server) setPersonas(w http.ResponseWriter, r *http.Request, sess *session) error {
	id := r.PathValue("id")
	if _, err := s.svc.SetPersonas(ctx(r), sess.p, id, custodian.PersonasInput{Personas: formList(r, "personas")}); err != nil {
		return err
	}
	return s.done(w, r, sess, "/claims/"+url.PathEscape(id), "Personas changed.")
}

func (s *Server) deleteClaim(w http.ResponseWriter, r *http.Request, sess *session) error {
	id := r.PathValue("id")
	if r.PostForm.Get("confirm") != "yes" {
		cur, err := s.svc.GetClaim(ctx(r), sess.p, id, "")
		if err != nil {
			return err
		}
		s.askConfirm(w, r, sess, "Delete the claim and every version?", fmt.Sprintf("Delete the claim %s (%s) and all %d of its versions: their values are erased, only a tombstone stays.", cur.Claim.Key, id, cur.Claim.Version), "Delete the claim", "/claims/"+url.PathEscape(id))
		return nil
	}
	if _, err := s.svc.DeleteClaim(ctx(r), sess.p, r.PathValue("id")); err != nil {
		return err
	}
	return s.done(w, r, sess, "/claims", "Deleted the claim.")
}

func (s *Server) disputeClaim(w http.ResponseWriter, r *http.Request, sess *session) error {
	id := r.PathValue("id")
	if _, err := s.svc.DisputeClaim(ctx(r), sess.p, id); err != nil {
		return err
	}
	return s.done(w, r, sess, "/claims/"+url.PathEscape(id), "Disputed: recipients see it as disputed, and what was derived from it is stale.")
}

func (s *Server) undisputeClaim(w http.ResponseWriter, r *http.Request, sess *session) error {
	id := r.PathValue("id")
	if _, err := s.svc.WithdrawDispute(ctx(r), sess.p, id); err != nil {
		return err
	}
	return s.done(w, r, sess, "/claims/"+url.PathEscape(id), "Dispute withdrawn.")
}

func (s *Server) retractClaim(w http.ResponseWriter, r *http.Request, sess *session) error {
	id := r.PathValue("id")
	if r.PostForm.Get("confirm") != "yes" {
		cur, err := s.svc.GetClaim(ctx(r), sess.p, id, "")
		if err != nil {
			return err
		}
		s.askConfirm(w, r, sess, "Retract the claim?", fmt.Sprintf("Retract the claim %s (%s): no recipient receives it again, and a retracted claim cannot be made active again.", cur.Claim.Key, id), "Retract", "/claims/"+url.PathEscape(id))
		return nil
	}
	if _, err := s.svc.RetractClaim(ctx(r), sess.p, id); err != nil {
		return err
	}
	return s.done(w, r, sess, "/claims/"+url.PathEscape(id), "Retracted: no recipient receives it again.")
}

// ---- personas ----

func (s *Server) personas(w http.ResponseWriter, r *http.Request, sess *session) error {
	ps, err := s.svc.ListPersonas(ctx(r), sess.p)
	if err != nil {
		return err
	}
	s.render(w, http.StatusOK, "personas", sess, map[string]any{"Personas": ps})
	return nil
}

func (s *Server) createPersona(w http.ResponseWriter, r *http.Request, sess *session) error {
	doc := map[string]any{"id": r.PostForm.Get("id"), "name": r.PostForm.Get("name")}
	prefs := []string{}
	for _, line := range strings.Split(r.PostForm.Get("preferences"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			prefs = append(prefs, line)
		}
	}
	doc["preferences"] = prefs
	var in custodian.PersonaInput
	s.decode("persona.create", doc, &in)
	pe, _, err := s.svc.CreatePersona(ctx(r), sess.p, in)
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/personas", "Created persona "+pe.ID+".")
}

// updatePersona renames a persona and replaces its preferences.
func (s *Server) updatePersona(w http.ResponseWriter, r *http.Request, sess *session) error {
	prefs := []string{}
	for _, line := range strings.Split(r.PostForm.Get("preferences"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			prefs = append(prefs, line)
		}
	}
	// The name field starts blank, so that a name with bidi controls is
	// never shown reordered inside an input (only as text, with the
	// controls made visible): blank keeps the name.
	change := map[string]any{"preferences": prefs}
	if name := r.PostForm.Get("name"); name != "" {
		change["name"] = name
	}
	var in custodian.PersonaUpdateInput
	s.decode("persona.update", change, &in)
	pe, _, err := s.svc.UpdatePersona(ctx(r), sess.p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/personas", "Saved persona "+pe.ID+".")
}

func (s *Server) deletePersona(w http.ResponseWriter, r *http.Request, sess *session) error {
	id := r.PathValue("id")
	if r.PostForm.Get("confirm") != "yes" {
		ps, err := s.svc.ListPersonas(ctx(r), sess.p)
		if err != nil {
			return err
		}
		name := id
		for _, pe := range ps {
			if pe.ID == id {
				name = pe.Name + " (" + id + ")"
			}
		}
		s.askConfirm(w, r, sess, "Delete the persona?", "Delete the persona "+name+": its claims are taken out of it and every grant naming it is narrowed.", "Delete the persona", "/personas")
		return nil
	}
	out, err := s.svc.DeletePersona(ctx(r), sess.p, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/personas", fmt.Sprintf("Deleted persona %s: %d claims taken out of it, %d grants narrowed.", out.ID, len(out.Claims), len(out.GrantsNarrowed)))
}

// ---- summaries and the graph ----

func (s *Server) summaries(w http.ResponseWriter, r *http.Request, sess *session) error {
	sums, err := s.svc.ListSummaries(ctx(r), sess.p)
	if err != nil {
		return err
	}
	slices.Reverse(sums)
	s.render(w, http.StatusOK, "summaries", sess, map[string]any{"Summaries": sums})
	return nil
}

func (s *Server) summary(w http.ResponseWriter, r *http.Request, sess *session) error {
	got, err := s.svc.GetSummary(ctx(r), sess.p, r.PathValue("id"), "", 0)
	if err != nil {
		return err
	}
	sums, err := s.svc.ListSummaries(ctx(r), sess.p)
	if err != nil {
		return err
	}
	claims, err := s.parentClaims(r, sess, got.Summary, sums)
	if err != nil {
		return err
	}
	s.render(w, http.StatusOK, "summary", sess, map[string]any{
		"Summary": got.Summary, "Lineage": summaryLineage(got.Summary, sums, claims).under(sess.base),
	})
	return nil
}

// parentClaims reads the current version of every claim in sm's lineage.
func (s *Server) parentClaims(r *http.Request, sess *session, sm custodian.Summary, sums []custodian.Summary) (map[string]custodian.Claim, error) {
	byID := map[string]custodian.Summary{}
	for _, x := range sums {
		byID[x.ID] = x
	}
	out := map[string]custodian.Claim{}
	seen := map[string]bool{}
	var walk func(x custodian.Summary, depth int) error
	walk = func(x custodian.Summary, depth int) error {
		for _, ref := range x.DerivedFrom {
			id, _, _ := strings.Cut(ref, "@")
			if seen[id] || depth > maxLineageDepth {
				continue
			}
			seen[id] = true
			if p, ok := byID[id]; ok {
				if err := walk(p, depth+1); err != nil {
					return err
				}
				continue
			}
			c, err := s.svc.GetClaim(ctx(r), sess.p, id, "")
			if custodian.KindOf(err) == custodian.KindNotFound || custodian.KindOf(err) == custodian.KindInvalid {
				continue
			}
			if err != nil {
				return err
			}
			out[id] = c.Claim
		}
		return nil
	}
	return out, walk(sm, 0)
}

func (s *Server) graphPage(w http.ResponseWriter, r *http.Request, sess *session) error {
	node := r.URL.Query().Get("node")
	if node == "" {
		node = custodian.SubjectSelf
	}
	n, err := s.svc.Traverse(ctx(r), sess.p, custodian.NeighborQuery{Node: node, Depth: 2})
	if err != nil {
		return err
	}
	names, err := s.entities(r, sess)
	if err != nil {
		return err
	}
	s.render(w, http.StatusOK, "graph", sess, map[string]any{"Node": node, "Edges": n.Edges, "Picture": neighbourhood(n, names).under(sess.base), "Names": names})
	return nil
}

// entity is what the console shows of a graph node: its type and name.
type entity struct{ Type, Name string }

// entityNames maps each entity's id to its type and name: the value of
// its active name claim (a claim about the entity whose key's last part is
// "name", the newest if several), or none.
type entityNames map[string]entity

// Label is how the console names node id: "you" for the owner, an
// entity's name, else its id.
func (n entityNames) Label(id string) string {
	if id == custodian.SubjectSelf {
		return "you"
	}
	if e, ok := n[id]; ok && e.Name != "" {
		return e.Name
	}
	return id
}

// TypeOf is the type of entity id ("" for none).
func (n entityNames) TypeOf(id string) string { return n[id].Type }

// Relation writes a relationship claim's value with names ("Ana works_at
// Acme"); "" for any other value.
func (n entityNames) Relation(value json.RawMessage) string {
	var rel struct{ From, To, Relation string }
	if json.Unmarshal(value, &rel) != nil || rel.From == "" || rel.To == "" || rel.Relation == "" {
		return ""
	}
	return n.Label(rel.From) + " " + rel.Relation + " " + n.Label(rel.To)
}

// entities reads every entity and its name.
func (s *Server) entities(r *http.Request, sess *session) (entityNames, error) {
	ents, err := s.svc.ListEntities(ctx(r), sess.p)
	if err != nil {
		return nil, err
	}
	out := make(entityNames, len(ents))
	for _, e := range ents {
		out[e.ID] = entity{Type: e.Type}
	}
	if len(out) == 0 {
		return out, nil
	}
	list, err := s.svc.ListClaims(ctx(r), sess.p, "", "")
	if err != nil {
		return nil, err
	}
	newest := map[string]time.Time{}
	for _, c := range list.Claims {
		e, ok := out[c.Subject]
		if !ok || c.Status != custodian.StatusActive || (c.Key != "name" && !strings.HasSuffix(c.Key, ".name")) {
			continue
		}
		var name string
		if json.Unmarshal(c.Value, &name) != nil || name == "" {
			continue
		}
		if at, seen := newest[c.Subject]; seen && at.After(c.RecordedAt) {
			continue
		}
		newest[c.Subject] = c.RecordedAt
		e.Name = name
		out[c.Subject] = e
	}
	return out, nil
}

// ---- receipts ----

func (s *Server) receipts(w http.ResponseWriter, r *http.Request, sess *session) error {
	q := r.URL.Query()
	all, err := s.svc.Receipts(ctx(r), sess.p, 1000)
	if err != nil {
		return err
	}
	v, err := s.svc.VerifyReceipts(ctx(r), sess.p)
	if err != nil {
		return err
	}
	app, purpose, decision := q.Get("app"), q.Get("purpose"), q.Get("decision")
	shown := make([]custodian.Receipt, 0, len(all))
	for _, rc := range all {
		if app != "" && rc.Recipient != app && rc.Actor != "consumer:"+app {
			continue
		}
		if purpose != "" && rc.Purpose != purpose {
			continue
		}
		if decision != "" && rc.Decision != decision {
			continue
		}
		shown = append(shown, rc)
	}
	s.render(w, http.StatusOK, "receipts", sess, map[string]any{
		"Receipts": shown, "Total": len(all), "Verification": v, "App": app, "Purpose": purpose, "Decision": decision,
	})
	return nil
}

// ---- quarantine ----

// unmappedPrefix begins the problem of a held record whose producer is
// foreign (package quarantine).
const unmappedPrefix = "identity unmapped: "

// quarantinePage is how many held records the console shows a page.
const quarantinePage = 200

func (s *Server) quarantine(w http.ResponseWriter, r *http.Request, sess *session) error {
	pg, err := s.svc.ListQuarantine(ctx(r), sess.p, custodian.QuarantineQuery{Limit: quarantinePage, Cursor: r.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	personas, err := s.svc.ListPersonas(ctx(r), sess.p)
	if err != nil {
		return err
	}
	consumers, err := s.svc.ListConsumers(ctx(r), sess.p)
	if err != nil {
		return err
	}
	// The foreign identities the held records name, each once, for the
	// owner to map to a local one chosen from a list.
	var foreign []string
	for _, q := range pg.Records {
		for _, pr := range q.Problems {
			if f, ok := strings.CutPrefix(pr, unmappedPrefix); ok && !slices.Contains(foreign, f) {
				foreign = append(foreign, f)
			}
		}
	}
	slices.Sort(foreign)
	var locals []string
	for _, c := range consumers {
		locals = append(locals, c.Name)
	}
	s.render(w, http.StatusOK, "quarantine", sess, map[string]any{"Page": pg, "Personas": personas, "Foreign": foreign, "Locals": locals,
		"Paged": r.URL.Query().Get("cursor") != ""})
	return nil
}

// adoptInput reads an adopt's personas and identity mappings from the
// form: each map field is "foreign:…=local", or "" to leave it foreign.
func adoptInput(r *http.Request) (custodian.AdoptInput, error) {
	in := custodian.AdoptInput{Personas: formList(r, "personas")}
	for _, m := range formList(r, "map") {
		from, to, ok := strings.Cut(m, "=")
		if !ok || !strings.HasPrefix(from, "foreign:") || to == "" {
			return in, invalid("an identity mapping is foreign:…=NAME")
		}
		if in.Identities == nil {
			in.Identities = map[string]string{}
		}
		in.Identities[from] = to
	}
	if len(in.Personas) == 0 {
		in.Personas = nil // none chosen: the source's personas that exist here
	}
	return in, nil
}

// adopt adopts one held record (the row's form).
func (s *Server) adopt(w http.ResponseWriter, r *http.Request, sess *session) error {
	in, err := adoptInput(r)
	if err != nil {
		return err
	}
	out, err := s.svc.AdoptQuarantined(ctx(r), sess.p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/quarantine", adoptedMessage(out))
}

// adoptMany adopts the records selected, or all that are not blocked.
func (s *Server) adoptMany(w http.ResponseWriter, r *http.Request, sess *session) error {
	in, err := adoptInput(r)
	if err != nil {
		return err
	}
	in.IDs, in.All = formList(r, "ids"), r.PostForm.Get("all") != ""
	if in.All {
		in.IDs = nil
	} else if len(in.IDs) == 0 {
		return invalid("select the records to adopt, or adopt all")
	}
	out, err := s.svc.AdoptQuarantined(ctx(r), sess.p, "", in)
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/quarantine", adoptedMessage(out))
}

// adoptedMessage says what an adopt did and who reads the adopted claims
// now.
func adoptedMessage(out custodian.Adopted) string {
	msg := fmt.Sprintf("Adopted %d record(s).", out.Adopted)
	if len(out.ReadBy) == 0 {
		return msg + " No app reads them until you grant it."
	}
	var who []string
	for _, app := range slices.Sorted(maps.Keys(out.ReadBy)) {
		who = append(who, fmt.Sprintf("%s (%d)", app, out.ReadBy[app]))
	}
	return msg + " Read now by: " + strings.Join(who, ", ") + "."
}

func (s *Server) rejectHeld(w http.ResponseWriter, r *http.Request, sess *session) error {
	n, _, err := s.svc.RejectQuarantined(ctx(r), sess.p, []string{r.PathValue("id")}, false)
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/quarantine", fmt.Sprintf("Rejected %d record(s).", n))
}

// rejectMany rejects the records selected.
func (s *Server) rejectMany(w http.ResponseWriter, r *http.Request, sess *session) error {
	ids := formList(r, "ids")
	if len(ids) == 0 {
		return invalid("select the records to reject")
	}
	n, _, err := s.svc.RejectQuarantined(ctx(r), sess.p, ids, false)
	if err != nil {
		return err
	}
	return s.done(w, r, sess, "/quarantine", fmt.Sprintf("Rejected %d record(s).", n))
}

// ---- settings ----

// tiers are the sensitivity tiers, lowest first.
var tiers = []string{custodian.SensitivityPublic, custodian.SensitivityStandard, custodian.SensitivitySensitive, custodian.SensitivityCritical}

func (s *Server) settings(w http.ResponseWriter, r *http.Request, sess *session) error {
	set, err := s.svc.GetSettings(ctx(r), sess.p)
	if err != nil {
		return err
	}
	s.render(w, http.StatusOK, "settings", sess, map[string]any{
		"Settings": set, "Warnings": set.Warnings(),
		"AutoGrants":  []string{"none", custodian.SensitivityPublic, custodian.SensitivityStandard},
		"Tiers":       tiers,
		"Disclosures": []string{custodian.DisclosureValue, custodian.DisclosureReference},
	})
	return nil
}

// saveSettings sends every setting the form shows: a number left empty is
// 0 (the default), a switch left unticked is off, a tier left at
// "default" follows the built-in disclosure.
func (s *Server) saveSettings(w http.ResponseWriter, r *http.Request, sess *session) error {
	f := r.PostForm
	doc := map[string]any{
		"auto_grant":         f.Get("auto_grant"),
		"user_only_write":    splitList(f.Get("user_only_write")),
		"elicited_approvals": f.Get("elicited_approvals") == "true",
		"long_lived_tokens":  f.Get("long_lived_tokens") == "true",
		"local_vaults":       f.Get("local_vaults") == "true",
	}
	for _, name := range []string{"reads_per_minute", "writes_per_minute", "live_tokens_per_app", "pending_proposals_per_app", "receipt_retention_days"} {
		v := strings.TrimSpace(f.Get(name))
		if v == "" {
			v = "0"
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return invalid(name + " must be a whole number")
		}
		doc[name] = n
	}
	disclosure := map[string]string{}
	for _, t := range tiers {
		if v := f.Get("disclosure_" + t); v != "" {
			disclosure[t] = v
		}
	}
	doc["disclosure"] = disclosure
	var in custodian.SettingsInput
	s.decode("settings.put", doc, &in)
	set, _, err := s.svc.PutSettings(ctx(r), sess.p, in)
	if err != nil {
		return err
	}
	msg := "Settings saved."
	for _, warn := range set.Warnings() {
		msg += " " + warn
	}
	return s.done(w, r, sess, "/settings", msg)
}
