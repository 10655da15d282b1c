package cli

import (
	"context"
	"fmt"

	"github.com/phc-project/phc/internal/client"
	"github.com/phc-project/phc/internal/humanfmt"
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
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		keys, err := cl.VaultKeys(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, vaultKeysJSONOf(keys))
		}
		if len(keys) == 0 {
			fmt.Fprintln(env.Stdout, "no vault keys (a reader's MCP client binds one by sending a Client-Vault header while local_vaults is on)")
		}
		for _, k := range keys {
			extra := ""
			if k.BlockedBy != "" {
				extra = "  also shown by " + printable(k.BlockedBy)
			}
			fmt.Fprintf(env.Stdout, "%s  %s  reader %s  %s  first seen %s%s\n", k.ID, k.Kid, printable(k.Reader), k.Status, humanfmt.Time(k.FirstSeen), extra)
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
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		out, err := cl.SetVaultKey(ctx, sub, client.VaultKeyRequest{Key: key})
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s %s (reader %s): %s (revision %d)\n", out.Key.ID, out.Key.Kid, printable(out.Key.Reader), out.Key.Status, out.Revision)
		return nil
	}
	return usageError("usage: phc vault-keys [list] | activate KID | revoke KID")
}
