package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/valueref"
)

// ResolvePath is the Client-Vault v=1 resolve endpoint (docs/formats/reference.md),
// published as client_vault_endpoint in the RFC 9728 metadata while local
// vaults are on. Its route and the owner's vault-keys routes are in the
// route table (server.go).
const ResolvePath = "/phc/v1/vault/resolve"

// resolve answers a local vault hook: every value, or one error whose body
// carries the Client-Vault code in "error" (and in "constraint", as every
// phc error does), with key, activates_at or server_time where the
// protocol's table says.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request, _ custodian.Principal) error {
	raw, err := readBody(r)
	if err == nil {
		bearer, _ := bearerToken(r)
		var out custodian.ResolveResult
		in := custodian.ResolveInput{Bearer: bearer, Body: valueref.ReadBody(raw)}
		if out, err = s.svc.Resolve(r.Context(), in); err == nil {
			writeJSON(w, http.StatusOK, out)
			return nil
		}
	}
	d := custodian.Describe(err)
	if d.Status >= 500 && d.Constraint != "disabled" {
		s.log.Error("resolve failed", "err", err)
	} else {
		s.log.Debug("resolve refused", "constraint", d.Constraint, "err", err)
	}
	body := map[string]any{"error": d.Constraint, "constraint": d.Constraint, "message": d.Error}
	switch {
	case d.Key != "":
		body["key"] = d.Key
	case d.ServerTime != nil:
		body["server_time"] = d.ServerTime.UTC().Format(time.RFC3339)
	case d.Constraint == "pending":
		// phc activates a binding only when the owner does: no time is set.
		body["activates_at"] = nil
		if d.ActivatesAt != nil {
			body["activates_at"] = d.ActivatesAt.UTC().Format(time.RFC3339)
		}
	}
	if d.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((d.RetryAfter+time.Second-1)/time.Second)))
	}
	writeJSON(w, d.Status, body)
	return nil
}

func (s *Server) listVaultKeys(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
	out, err := s.svc.VaultKeys(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"vault_keys": out})
	return nil
}

// setVaultKey activates or revokes the binding the body names: {"key":
// kid or vk_ id}.
func (s *Server) setVaultKey(status string) handler {
	return func(w http.ResponseWriter, r *http.Request, p custodian.Principal) error {
		raw, err := readBody(r)
		if err != nil {
			return err
		}
		var in struct {
			Key string `json:"key"`
		}
		if err := json.Unmarshal(raw, &in); err != nil || in.Key == "" {
			return badRequest(`the body is {"key": KID or vk_ id}`)
		}
		out, rev, err := s.svc.SetVaultKey(r.Context(), p, in.Key, status)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"vault_key": out, "revision": rev})
		return nil
	}
}
