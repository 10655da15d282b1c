package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
)

// runBackup saves this vault's own backup: phc backup FILE writes the
// archive of GET /context/export (claims, every version, personas, entities and summaries,
// sealed under the vault's password and Secret Key) to FILE, mode 0600.
func runBackup(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "backup", &c)
	force := fs.Bool("force", false, "replace FILE if it exists")
	files, err := idsAndFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageError("usage: phc backup FILE [--force]")
	}
	path := files[0]
	if _, err := os.Stat(path); err == nil && !*force {
		return fmt.Errorf("%s exists: choose another name, or add --force to replace it", printable(path))
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	cl.HTTP.Timeout = bulkTimeout
	raw, err := cl.ExportArchive(ctx)
	if err != nil {
		return err
	}
	if err := writeFile0600(path, raw); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "backed up to %s (%d bytes): every claim (all its versions) and persona, sealed under this vault's password and Secret Key.\n", printable(path), len(raw))
	fmt.Fprintln(env.Stdout, "It does not hold consumers, grants, tokens, settings or receipts: to keep those, copy the data dir of a stopped daemon.")
	return nil
}

// runRestore loads a backup made by phc backup: phc restore FILE
// [--replace]. It takes the password and Secret Key of the vault that made
// the backup. A backup of this vault is restored at once; one of another
// vault (the old machine's) is held in the quarantine for the owner to
// adopt.
func runRestore(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "restore", &c)
	replace := fs.Bool("replace", false, "erase every active claim first (default: merge, keeping what is here and skipping claims already here)")
	skFile := fs.String("secret-key-file", "", "file holding the Secret Key of the vault that made the backup (default: $PHC_SECRET_KEY, else DIR/secret.key, else a prompt)")
	files, err := idsAndFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageError("usage: phc restore FILE [--replace] [--secret-key-file KEYFILE]")
	}
	path := files[0]
	raw, err := os.ReadFile(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("no backup at %s", printable(path))
	}
	if err != nil {
		return err
	}
	if !json.Valid(raw) {
		return fmt.Errorf("%s is not a phc backup (phc backup FILE makes one)", printable(path))
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	cl.HTTP.Timeout = bulkTimeout
	pw, err := password(env, false)
	if err != nil {
		return err
	}
	sk, err := findSecretKey(env, c.data, *skFile)
	if err != nil {
		return err
	}
	mode := "merge"
	if *replace {
		mode = "replace"
	}
	out, err := cl.ImportArchive(ctx, custodian.ImportInput{Archive: raw, Mode: mode, Password: string(pw), SecretKey: sk.text})
	if client.IsConstraint(err, "unauthenticated") {
		return errors.New("wrong password or Secret Key for this backup: give those of the vault that made it (PHC_PASSWORD, and PHC_SECRET_KEY or --secret-key-file)")
	}
	if err != nil {
		return err
	}
	defer func() {
		for _, l := range out.LossReport {
			fmt.Fprintf(env.Stdout, "  lost: %s %s: %s\n", printable(l.Dropped), printable(l.Record), printable(l.Reason))
		}
	}()
	if out.Held > 0 {
		fmt.Fprintf(env.Stdout, "this backup was made by another vault: its %d records are held in the quarantine, not used yet.\n", out.Held)
		fmt.Fprintln(env.Stdout, "Look at them with phc quarantine, and make them yours with phc quarantine adopt --all.")
		return nil
	}
	fmt.Fprintf(env.Stdout, "restored: %d claims added, %d skipped (already here, or deleted here: --replace brings those back)", out.Imported, out.Skipped)
	if *replace {
		fmt.Fprintf(env.Stdout, ", %d erased first", out.Removed)
	}
	if out.Entities > 0 || out.Summaries > 0 {
		fmt.Fprintf(env.Stdout, "; %d entities and %d summaries added", out.Entities, out.Summaries)
	}
	fmt.Fprintf(env.Stdout, " (revision %d)\n", out.Revision)
	return nil
}
