package httpapi

import (
	"bytes"
	"net/http"

	"github.com/phc-project/phc/custodian"
)

func (s *Server) createEntity(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.EntityInput
	if err := s.body(r, "entity.create", &in); err != nil {
		return err
	}
	out, err := s.svc.CreateEntity(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listEntities(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListEntities(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"entities": out})
	return nil
}

func (s *Server) createSummary(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.SummaryInput
	if err := s.body(r, "summary.create", &in); err != nil {
		return err
	}
	out, err := s.svc.CreateSummary(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listSummaries(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListSummaries(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"summaries": out})
	return nil
}

func (s *Server) getSummary(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	purpose, err := query(r, "purpose")
	if err != nil {
		return err
	}
	minRev, err := queryUint(r, "min_revision")
	if err != nil {
		return err
	}
	out, err := s.svc.GetSummary(r.Context(), p, r.PathValue("id"), purpose, minRev)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) neighbors(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	q := custodian.NeighborQuery{Node: r.PathValue("node")}
	var err error
	if q.Relation, err = query(r, "relation"); err != nil {
		return err
	}
	if q.Purpose, err = query(r, "purpose"); err != nil {
		return err
	}
	if q.Cursor, err = query(r, "cursor"); err != nil {
		return err
	}
	depth, err := queryUint(r, "depth")
	if err != nil {
		return err
	}
	limit, err := queryUint(r, "limit")
	if err != nil {
		return err
	}
	if depth > 1000 || limit > 100000 {
		return badRequest("depth or limit is out of range")
	}
	q.Depth, q.Limit = int(depth), int(limit)
	if q.MinRevision, err = queryUint(r, "min_revision"); err != nil {
		return err
	}
	out, err := s.svc.Traverse(r.Context(), p, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) check(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	bulkDeadlines(w) // it reads every claim's metadata and the whole graph
	defer releaseMemory()
	out, err := s.svc.Check(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) rebuildGraph(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	bulkDeadlines(w)
	rev, err := s.svc.RebuildGraph(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"rebuilt": true, "revision": rev})
	return nil
}

// exportGraph answers N-Quads (format=nquads, the default) or PROV-O
// JSON-LD (format=prov-jsonld). The body is built in full first, so that an
// error still gets a proper error response.
func (s *Server) exportGraph(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	bulkDeadlines(w)
	format, err := query(r, "format")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	var ctype string
	switch format {
	case "", "nquads":
		err, ctype = s.svc.ExportGraph(r.Context(), p, &buf), "application/n-quads"
	case "prov-jsonld":
		err, ctype = s.svc.ExportProv(r.Context(), p, &buf), "application/ld+json"
	default:
		return badRequest("format must be nquads or prov-jsonld")
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil
}

func (s *Server) exchangeToken(w http.ResponseWriter, r *http.Request, _ custodian.Principal) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	in, err := custodian.ParseExchange(raw)
	if err != nil {
		return err
	}
	out, err := s.svc.ExchangeToken(r.Context(), in)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) addTrust(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.TrustInput
	if err := s.body(r, "trust.add", &in); err != nil {
		return err
	}
	out, err := s.svc.AddTrust(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listTrust(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListTrust(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"trust": out})
	return nil
}

func (s *Server) removeTrust(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	rev, err := s.svc.RemoveTrust(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"removed": true, "revision": rev})
	return nil
}

func (s *Server) pinDECIssuer(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.DECTrustInput
	if err := s.body(r, "dec.trust", &in); err != nil {
		return err
	}
	out, err := s.svc.PinDECIssuer(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) addDECPolicy(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.DECPolicyInput
	if err := s.body(r, "dec.policy", &in); err != nil {
		return err
	}
	out, err := s.svc.AddDECPolicy(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listDECTrust(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListDECTrust(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// verifyDEC answers the report of docs/formats/dec.md with 200 whatever the
// verdicts: a document that does not verify is an answer, not an error.
func (s *Server) verifyDEC(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	out, err := s.svc.VerifyDEC(r.Context(), p, custodian.DECDocumentInput{Document: raw})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) presentDEC(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	out, err := s.svc.PresentDEC(r.Context(), p, custodian.DECDocumentInput{Document: raw})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// unrevokeDECKey withdraws one revocation of a pinned DEC issuer's key.
func (s *Server) unrevokeDECKey(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.DECUnrevokeInput
	if err := s.body(r, "dec.unrevoke", &in); err != nil {
		return err
	}
	out, err := s.svc.UnrevokeDECKey(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) listDECPresentations(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListDECPresentations(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"presentations": out})
	return nil
}
