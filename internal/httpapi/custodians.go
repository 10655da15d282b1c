package httpapi

import (
	"net/http"

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
	out, err := s.svc.PinCustodian(r.Context(), p, raw)
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
