package cli

import (
	"context"
	"fmt"
)

// runVaultKeys is phc vault-keys: the local vault keys (kids) bound to
// readers, and the owner's activation or revocation of one. A kid binds
// pending when a reader's MCP client first shows it; only an active
// binding may resolve references.
func runVaultKeys(ctx context.Context, env *Env, args []string) error {
	var c common
	sub, rest := firstArg(args)
	switch sub {
	case "", "list":
		fs := newFlags(env, "vault-keys", &c)
		asJSON := fs.Bool("json", false, "print JSON")
		if sub == "" {
			rest = args
		}
		if err := parse(fs, rest); err != nil {
			return err
		}
		var out struct {
			Keys []struct {
				ID        string `json:"id"`
				Kid       string `json:"kid"`
				Reader    string `json:"reader"`
				Status    string `json:"status"`
				FirstSeen string `json:"first_seen"`
				BlockedBy string `json:"blocked_by"`
			} `json:"vault_keys"`
		}
		if err := ownerDo(ctx, env, c, "GET", "/phc/v1/vault-keys", nil, &out); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, out)
		}
		if len(out.Keys) == 0 {
			fmt.Fprintln(env.Stdout, "no vault keys (a reader's MCP client binds one by sending a Client-Vault header while local_vaults is on)")
		}
		for _, k := range out.Keys {
			extra := ""
			if k.BlockedBy != "" {
				extra = "  also shown by " + printable(k.BlockedBy)
			}
			fmt.Fprintf(env.Stdout, "%s  %s  reader %s  %s  first seen %s%s\n", k.ID, k.Kid, printable(k.Reader), k.Status, humanTime(k.FirstSeen), extra)
		}
		return nil
	case "activate", "revoke":
		fs := newFlags(env, "vault-keys "+sub, &c)
		key, rest := firstArg(rest)
		if err := parse(fs, rest); err != nil {
			return err
		}
		if key == "" {
			key = fs.Arg(0)
		}
		if key == "" {
			return usageError("usage: phc vault-keys %s KID|vk_ID", sub)
		}
		var out struct {
			Key struct {
				ID     string `json:"id"`
				Kid    string `json:"kid"`
				Reader string `json:"reader"`
				Status string `json:"status"`
			} `json:"vault_key"`
			Revision uint64 `json:"revision"`
		}
		if err := ownerDo(ctx, env, c, "POST", "/phc/v1/vault-keys/"+sub, map[string]string{"key": key}, &out); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s %s (reader %s): %s (revision %d)\n", out.Key.ID, out.Key.Kid, printable(out.Key.Reader), out.Key.Status, out.Revision)
		return nil
	}
	return usageError("usage: phc vault-keys [list] | activate KID | revoke KID")
}
