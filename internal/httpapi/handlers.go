package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/phc-project/phc/custodian"
)

func (s *Server) status(w http.ResponseWriter, r *http.Request, _ custodian.Principal) error {
	var p custodian.Principal
	if bearer, ok := bearerToken(r); ok {
		// Counts are for the owner's session only; any other credential,
		// valid or not, sees what an anonymous caller sees.
		if pp, err := s.svc.AuthenticateOn(r.Context(), custodian.ChannelHTTP, bearer); err == nil {
			p = pp
		}
	}
	writeJSON(w, http.StatusOK, s.svc.Status(r.Context(), p))
	return nil
}

func (s *Server) unlock(w http.ResponseWriter, r *http.Request, _ custodian.Principal) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	var in custodian.UnlockInput
	if err := s.svc.Decode("unlock", raw, &in); err != nil {
		return err
	}
	token, err := s.svc.Unlock(r.Context(), []byte(in.Password), in.SecretKey)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"token": token})
	return nil
}

func (s *Server) lock(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	if err := s.svc.Lock(r.Context(), p); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"locked": true})
	return nil
}

func (s *Server) mintToken(w http.ResponseWriter, r *http.Request, _ custodian.Principal) error {
	var in custodian.TokenRequest
	if err := s.body(r, "token.create", &in); err != nil {
		return err
	}
	out, err := s.svc.MintServiceToken(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) addConsumer(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.ConsumerInput
	if err := s.body(r, "consumer.add", &in); err != nil {
		return err
	}
	out, err := s.svc.AddConsumer(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) registerConsumer(w http.ResponseWriter, r *http.Request, _ custodian.Principal) error {
	var in custodian.ConsumerInput
	if err := s.body(r, "consumer.register", &in); err != nil {
		return err
	}
	out, created, err := s.svc.RegisterConsumer(r.Context(), in)
	if err != nil {
		return err
	}
	status := http.StatusOK // registered before, with this secret
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, out)
	return nil
}

func (s *Server) approveConsumer(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ApproveConsumer(r.Context(), p, r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteConsumer(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	rev, err := s.svc.DeleteConsumer(r.Context(), p, r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]uint64{"revision": rev})
	return nil
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListTokens(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
	return nil
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	rev, err := s.svc.RevokeToken(r.Context(), p, r.PathValue("prefix"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]uint64{"revision": rev})
	return nil
}

func (s *Server) listConsumers(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListConsumers(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"consumers": out})
	return nil
}

func (s *Server) createPersona(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.PersonaInput
	if err := s.body(r, "persona.create", &in); err != nil {
		return err
	}
	out, rev, err := s.svc.CreatePersona(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"persona": out, "revision": rev})
	return nil
}

func (s *Server) listPersonas(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListPersonas(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"personas": out})
	return nil
}

func (s *Server) updatePersona(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.PersonaUpdateInput
	if err := s.body(r, "persona.update", &in); err != nil {
		return err
	}
	out, rev, err := s.svc.UpdatePersona(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"persona": out, "revision": rev})
	return nil
}

func (s *Server) deletePersona(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.DeletePersona(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) createGrant(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.GrantInput
	if err := s.body(r, "grant.create", &in); err != nil {
		return err
	}
	out, err := s.svc.CreateGrant(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listGrants(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListGrants(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"grants": out})
	return nil
}

func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	rev, err := s.svc.RevokeGrant(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]uint64{"revision": rev})
	return nil
}

func (s *Server) narrowGrant(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.GrantTerms
	if err := s.body(r, "grant.narrow", &in); err != nil {
		return err
	}
	out, err := s.svc.NarrowGrant(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) propose(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.ProposalInput
	if err := s.body(r, "propose", &in); err != nil {
		return err
	}
	out, err := s.svc.Propose(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) review(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.Review(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"proposals": out})
	return nil
}

func (s *Server) confirm(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.ConfirmInput
	if err := s.body(r, "confirm", &in); err != nil {
		return err
	}
	out, err := s.svc.Confirm(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) confirmBulk(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.BulkConfirmInput
	if err := s.body(r, "review.confirm", &in); err != nil {
		return err
	}
	out, err := s.svc.ConfirmBulk(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) rejectBulk(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.BulkRejectInput
	if err := s.body(r, "review.reject", &in); err != nil {
		return err
	}
	out, err := s.svc.RejectBulk(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.RejectInput
	if err := s.body(r, "reject", &in); err != nil {
		return err
	}
	rev, err := s.svc.Reject(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": custodian.StatusRejected, "revision": rev})
	return nil
}

func (s *Server) listClaims(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	key, err := query(r, "key")
	if err != nil {
		return err
	}
	persona, err := query(r, "persona")
	if err != nil {
		return err
	}
	out, err := s.svc.ListClaims(r.Context(), p, key, persona)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getClaim(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	purpose, err := query(r, "purpose")
	if err != nil {
		return err
	}
	out, err := s.svc.GetClaim(r.Context(), p, r.PathValue("id"), purpose)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) versions(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.Versions(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) correct(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.CorrectionInput
	if err := s.body(r, "claim.correct", &in); err != nil {
		return err
	}
	out, err := s.svc.Correct(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteClaim(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	rev, err := s.svc.DeleteClaim(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": custodian.StatusDeleted, "revision": rev})
	return nil
}

func (s *Server) setPersonas(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.PersonasInput
	if err := s.body(r, "claim.personas", &in); err != nil {
		return err
	}
	out, err := s.svc.SetPersonas(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) disputeClaim(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.DisputeClaim(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) withdrawDispute(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.WithdrawDispute(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) retractClaim(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.RetractClaim(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) context(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var q custodian.ContextQuery
	var err error
	if q.Purpose, err = query(r, "purpose"); err != nil {
		return err
	}
	if q.Persona, err = query(r, "persona"); err != nil {
		return err
	}
	if q.MinRevision, err = queryUint(r, "min_revision"); err != nil {
		return err
	}
	out, err := s.svc.Context(r.Context(), p, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) receipts(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	limit, err := queryUint(r, "limit")
	if err != nil {
		return err
	}
	out, err := s.svc.Receipts(r.Context(), p, int(min(limit, 1001))) // the core refuses over 1000
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"receipts": out})
	return nil
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	limit, err := queryUint(r, "limit")
	if err != nil {
		return err
	}
	out, err := s.svc.Audit(r.Context(), p, int(min(limit, 1001)))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": out})
	return nil
}

func (s *Server) verifyReceipts(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.VerifyReceipts(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) listFields(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	purpose, err := query(r, "purpose")
	if err != nil {
		return err
	}
	out, err := s.svc.ListFields(r.Context(), p, purpose)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getField(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	purpose, err := query(r, "purpose")
	if err != nil {
		return err
	}
	out, err := s.svc.GetField(r.Context(), p, r.PathValue("id"), purpose)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) putField(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.FieldInput
	if err := s.body(r, "field.put", &in); err != nil {
		return err
	}
	id := r.PathValue("id")
	out, pending, err := s.svc.PutField(r.Context(), p, id, in)
	if err != nil {
		return err
	}
	// The write is done as asked; a key that looks like another name for a
	// well-known one says so (custodian.FieldHints).
	hints := custodian.FieldHints(id)
	if pending != nil {
		// Waiting for the owner's consent: accepted, not yet written.
		writeJSON(w, http.StatusAccepted, struct {
			*custodian.Proposed
			Warnings []custodian.Hint `json:"warnings,omitempty"`
		}{pending, hints})
		return nil
	}
	writeJSON(w, http.StatusOK, struct {
		custodian.FieldWritten
		Warnings []custodian.Hint `json:"warnings,omitempty"`
	}{out, hints})
	return nil
}

func (s *Server) deleteField(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	rev, err := s.svc.DeleteField(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": custodian.StatusDeleted, "revision": rev})
	return nil
}

func (s *Server) fieldsInCategory(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	purpose, err := query(r, "purpose")
	if err != nil {
		return err
	}
	out, err := s.svc.FieldsInCategory(r.Context(), p, r.PathValue("name"), purpose)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) fieldContext(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	purpose, err := query(r, "purpose")
	if err != nil {
		return err
	}
	out, err := s.svc.FieldContext(r.Context(), p, purpose)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) setSensitivity(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.SensitivityInput
	if err := s.body(r, "field.sensitivity", &in); err != nil {
		return err
	}
	out, err := s.svc.SetSensitivity(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getSettings(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.GetSettings(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) putSettings(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.SettingsInput
	if err := s.body(r, "settings.put", &in); err != nil {
		return err
	}
	out, rev, err := s.svc.PutSettings(r.Context(), p, in)
	if err != nil {
		return err
	}
	answer := map[string]any{"settings": out, "revision": rev}
	if ws := out.Warnings(); len(ws) > 0 {
		answer["warnings"] = ws
	}
	writeJSON(w, http.StatusOK, answer)
	return nil
}

func (s *Server) requestContext(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	var in custodian.RequestInput
	if err := s.body(r, "request.create", &in); err != nil {
		return err
	}
	out, err := s.svc.RequestContext(r.Context(), custodian.ChannelHTTP, p, in)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if out.Status == custodian.RequestApproved {
		status = http.StatusCreated
	}
	writeJSON(w, status, out)
	return nil
}

func (s *Server) pollRequest(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.PollRequest(r.Context(), custodian.ChannelHTTP, p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) listRequests(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.ListRequests(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"requests": out})
	return nil
}

func (s *Server) approveRequest(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	return s.decideRequest(w, r, p, true)
}

func (s *Server) denyRequest(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	return s.decideRequest(w, r, p, false)
}

func (s *Server) decideRequest(w http.ResponseWriter, r *http.Request, p custodian.Principal, approve bool) error {
	var in custodian.DecisionInput
	if err := s.body(r, "request.decide", &in); err != nil {
		return err
	}
	out, err := s.svc.DecideRequest(r.Context(), p, r.PathValue("id"), approve, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) export(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	bulkDeadlines(w)
	defer releaseMemory()
	archive, err := s.svc.Export(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, json.RawMessage(archive))
	return nil
}

func (s *Server) importArchive(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	bulkDeadlines(w)
	defer releaseMemory()
	var in custodian.ImportInput
	if err := s.body(r, "import", &in); err != nil {
		return err
	}
	out, err := s.svc.Import(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ownProposals answers an app how its proposal named by the path stands.
func (s *Server) ownProposals(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.OwnProposals(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) withdrawProposal(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.WithdrawProposal(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// search is GET /context/search?q=…&purpose=…&limit=…, as the MCP tool
// context_search.
func (s *Server) search(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	q, err := query(r, "q")
	if err != nil {
		return err
	}
	purpose, err := query(r, "purpose")
	if err != nil {
		return err
	}
	limit, err := queryUint(r, "limit")
	if err != nil {
		return err
	}
	if limit > 1000 {
		limit = 1000 // the core refuses anything over its bound
	}
	out, err := s.svc.SearchFields(r.Context(), p, q, purpose, int(limit))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
