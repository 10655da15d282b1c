package httpapi

import (
	"encoding/json"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/phc-project/phc/custodian"
)

func (s *Server) ownCard(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.OwnCard(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) pinCustodian(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	out, err := s.svc.PinCustodian(r.Context(), p, custodian.CardInput{Card: raw})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listCustodians(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListCustodians(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"custodians": out})
	return nil
}

func (s *Server) unpinCustodian(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	rev, err := s.svc.UnpinCustodian(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"removed": true, "revision": rev})
	return nil
}

// exportBundle answers the bundle itself (compact JWE); the header
// PHC-Bundle-Manifest carries its id, counts and loss report (JSON), the
// loss report left out when it would make the header too large.
func (s *Server) exportBundle(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	bulkDeadlines(w)
	defer releaseMemory()
	var in custodian.ExportInput
	if err := s.body(r, "export.bundle", &in); err != nil {
		return err
	}
	if in.PartClaims != 0 {
		return s.exportParts(w, r, p, in)
	}
	sealed, man, err := s.svc.ExportBundle(r.Context(), p, in)
	if err != nil {
		return err
	}
	head := map[string]any{"bundle_id": man.BundleID, "recipient": man.Recipient.CustodianID, "counts": man.Counts, "loss_report": man.LossReport}
	hdr, _ := json.Marshal(head)
	if len(hdr) > maxManifestHeader {
		delete(head, "loss_report")
		hdr, _ = json.Marshal(head)
	}
	w.Header().Set("Content-Type", "application/jose")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("PHC-Bundle-Manifest", string(hdr))
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(sealed)
	return err
}

// releaseMemory hands the heap a bulk operation (an export, an import, an
// adopt of many records: several copies of a bundle of up to 256 MiB) left
// behind back to the OS now rather than at the runtime's pace, so that a
// daemon idling after a migration is as small as before it.
func releaseMemory() { go debug.FreeOSMemory() }

// bulkDeadline is how long a request that moves a whole vault may take to
// send its body and receive its answer (the server's usual limit is 30 s).
const bulkDeadline = 30 * time.Minute

// bulkDeadlines extends the read and write deadlines of such a request's
// connection: an import of 100,000 records took 45 s on a busy machine, and
// its answer was cut off although the import had succeeded.
func bulkDeadlines(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	at := time.Now().Add(bulkDeadline)
	_ = rc.SetReadDeadline(at)
	_ = rc.SetWriteDeadline(at)
}

// maxManifestHeader bounds the PHC-Bundle-Manifest header.
const maxManifestHeader = 32 << 10

func (s *Server) importBundle(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	if r.URL.Query().Has("from") {
		return s.importMemories(w, r, p)
	}
	if r.URL.Query().Get("parts") == "zip" {
		return s.importParts(w, r, p)
	}
	bulkDeadlines(w)
	defer releaseMemory()
	r.Body = http.MaxBytesReader(w, r.Body, MaxBundle)
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	out, err := s.svc.ImportBundle(r.Context(), p, custodian.ImportBundleInput{Bundle: raw})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listQuarantine(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var q custodian.QuarantineQuery
	var err error
	if q.Status, err = query(r, "status"); err != nil {
		return err
	}
	if q.Problem, err = query(r, "problem"); err != nil {
		return err
	}
	if q.Cursor, err = query(r, "cursor"); err != nil {
		return err
	}
	limit, err := queryUint(r, "limit")
	if err != nil {
		return err
	}
	q.Limit = int(min(limit, 1<<20))
	out, err := s.svc.ListQuarantine(r.Context(), p, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) rejectQuarantined(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	n, rev, err := s.svc.RejectQuarantined(r.Context(), p, []string{r.PathValue("id")}, false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"rejected": n, "revision": rev})
	return nil
}

func (s *Server) rejectQuarantinedBulk(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	var in custodian.QuarantineRejectInput
	if err := s.svc.Decode("quarantine.reject", raw, &in); err != nil {
		return err
	}
	n, rev, err := s.svc.RejectQuarantined(r.Context(), p, in.IDs, in.All)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"rejected": n, "revision": rev})
	return nil
}

func (s *Server) adoptQuarantined(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	bulkDeadlines(w)
	defer releaseMemory()
	var in custodian.AdoptInput
	if err := s.body(r, "quarantine.adopt", &in); err != nil {
		return err
	}
	out, err := s.svc.AdoptQuarantined(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) unblockQuarantined(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.UnblockInput
	if err := s.body(r, "quarantine.unblock", &in); err != nil {
		return err
	}
	out, err := s.svc.UnblockQuarantined(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
