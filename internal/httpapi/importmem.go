package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/quarantine/importer"
)

// importMemories is POST /phc/v1/import?from=SOURCE[&name=FILE] (owner): an
// export of another memory system as the body, its format named by from
// (or detected, with from=auto), a key map in the PHC-Import-Map header.
// The body is spooled to an unlinked temporary file (mode 0600, gone when
// the import ends) so that the export is read twice — checked whole, then
// held in batches — and never sits in memory.
func (s *Server) importMemories(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	const op = "import.memories"
	if err := p.RequireOwner(op); err != nil {
		return err
	}
	bulkDeadlines(w)
	defer releaseMemory()
	r.Body = http.MaxBytesReader(w, r.Body, MaxExport)
	from, err := query(r, "from")
	if err != nil {
		return err
	}
	if from == "auto" {
		from = ""
	}
	name, err := query(r, "name")
	if err != nil {
		return err
	}
	var mapping importer.Map
	if h := r.Header.Get(importer.MapHeader); h != "" {
		if len(h) > 32<<10 || json.Unmarshal([]byte(h), &mapping) != nil {
			return &custodian.Error{Op: op, Kind: custodian.KindInvalid, Public: importer.MapHeader + " is a JSON object from category to {\"key\", \"kind\"}, at most 32 KiB"}
		}
	}
	f, n, err := spool(r, op, MaxExport)
	if err != nil {
		return err
	}
	defer f.Close()
	out, err := s.svc.ImportExport(r.Context(), p, custodian.ImportExportInput{From: from, Name: name, Export: f, Size: n, Map: mapping})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// spool copies the request's body into an unlinked temporary file (mode
// 0600, gone once closed) and returns it with the body's length: an
// export or a bundle in parts is read twice, and never held in memory.
func spool(r *http.Request, op string, limit int64) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "phc-import-*")
	if err != nil {
		return nil, 0, &custodian.Error{Op: op, Kind: custodian.KindInternal, Err: err}
	}
	os.Remove(f.Name()) // unlinked: nothing of it outlives the request
	n, err := io.Copy(f, r.Body)
	if err != nil {
		f.Close()
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, 0, &custodian.Error{Op: op, Kind: custodian.KindTooLarge, Public: fmt.Sprintf("at most %d GiB", limit>>30), Err: err}
		}
		return nil, 0, &custodian.Error{Op: op, Kind: custodian.KindInvalid, Public: "could not read the body", Err: err}
	}
	return f, n, nil
}

// exportParts answers POST /phc/v1/export with part_claims: the bundle in
// parts, a zip archive written to an unlinked temporary file in the
// journal, then sent.
func (s *Server) exportParts(w http.ResponseWriter, r *http.Request, p custodian.Principal, in custodian.ExportInput) error {
	f, err := os.CreateTemp("", "phc-export-*")
	if err != nil {
		return &custodian.Error{Op: "export.bundle", Kind: custodian.KindInternal, Err: err}
	}
	os.Remove(f.Name())
	defer f.Close()
	man, err := s.svc.ExportBundleParts(r.Context(), p, in, f)
	if err != nil {
		return err
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return &custodian.Error{Op: "export.bundle", Kind: custodian.KindInternal, Err: err}
	}
	head := map[string]any{"bundle_id": man.BundleID, "recipient": man.Recipient.CustodianID, "counts": man.Counts, "loss_report": man.LossReport}
	hdr, _ := json.Marshal(head)
	if len(hdr) > maxManifestHeader {
		delete(head, "loss_report")
		hdr, _ = json.Marshal(head)
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", fmt.Sprint(size))
	w.Header().Set("PHC-Bundle-Manifest", string(hdr))
	w.WriteHeader(http.StatusOK)
	_, err = io.Copy(w, f)
	return err
}

// importParts is POST /phc/v1/import?parts=zip (owner): a bundle in parts,
// the zip archive of its parts.
func (s *Server) importParts(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	const op = "import.bundle"
	if err := p.RequireOwner(op); err != nil {
		return err
	}
	bulkDeadlines(w)
	defer releaseMemory()
	f, n, err := spool(r, op, MaxParts)
	if err != nil {
		return err
	}
	defer f.Close()
	out, err := s.svc.ImportBundleParts(r.Context(), p, custodian.ImportPartsInput{Parts: f, Size: n})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}
