package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/clientvault"
)

// seeVaultKey hands the kid of a request's Client-Vault header, if any, to
// the core, which binds it to the reader (pending until the owner
// activates it). A header that is malformed, or a kid the core refuses,
// never fails the MCP request: the reader gets no binding, and the log
// says why.
func (s *Server) seeVaultKey(ctx context.Context, p custodian.Principal, r *http.Request) {
	if r == nil || p.Kind() != custodian.PrincipalConsumer {
		return
	}
	values := r.Header.Values(clientvault.HeaderName)
	if len(values) == 0 {
		return
	}
	kid, err := clientvault.ParseHeader(values)
	if err == nil {
		err = s.svc.SeeVaultKey(ctx, p, kid)
	}
	if err != nil {
		s.log.Debug("client-vault header not bound", "err", err)
	}
}

// MetadataHandlerFor serves the RFC 9728 protected-resource metadata of
// the MCP endpoint at base+"/mcp", with client_vault_endpoint (the
// resolve endpoint, same origin) while svc has local vaults on.
func MetadataHandlerFor(base, resolvePath string, svc *custodian.Service) http.Handler {
	meta := oauthex.ProtectedResourceMetadata{
		Resource:               base + "/mcp",
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "phc personal context custodian",
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method != http.MethodGet {
			http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
			return
		}
		raw, err := json.Marshal(&meta)
		var m map[string]any
		if err == nil {
			err = json.Unmarshal(raw, &m)
		}
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		if svc != nil && svc.LocalVaults() {
			m["client_vault_endpoint"] = base + resolvePath
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(m)
	})
}
