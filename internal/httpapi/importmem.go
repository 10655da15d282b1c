package httpapi

import (
	"encoding/json"
	"errors"
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
	f, err := os.CreateTemp("", "phc-import-*")
	if err != nil {
		return &custodian.Error{Op: op, Kind: custodian.KindInternal, Err: err}
	}
	os.Remove(f.Name()) // unlinked: nothing of the export outlives the import
	defer f.Close()
	n, err := io.Copy(f, r.Body)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return &custodian.Error{Op: op, Kind: custodian.KindTooLarge, Public: "an export is at most 1 GiB", Err: err}
		}
		return &custodian.Error{Op: op, Kind: custodian.KindInvalid, Public: "could not read the export", Err: err}
	}
	out, err := s.svc.ImportExport(r.Context(), p, custodian.ImportExportInput{From: from, Name: name, Export: f, Size: n, Map: mapping})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}
