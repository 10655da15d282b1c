package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/phc-project/phc/internal/vault"
)

func runInit(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newLocalFlags(env, "init", &c)
	if err := parse(fs, args); err != nil {
		return err
	}
	dir := c.data
	if vault.Exists(dir) {
		return fmt.Errorf("a vault already exists in %s", dir)
	}
	if err := checkNoRemnants(dir); err != nil {
		return err
	}
	pw, err := password(env, true)
	if err != nil {
		return err
	}
	sk, err := vault.Create(dir, pw)
	if err != nil {
		return fmt.Errorf("create vault: %w", err)
	}
	printKit(env.Stdout, dir, sk)
	return nil
}

func printKit(w io.Writer, dir, secretKey string) {
	fmt.Fprintf(w, `phc vault created in %s

  EMERGENCY KIT — shown once. Write it down and keep it apart from your password.
  Secret Key: %s

  Unlocking needs both your password and this Secret Key. It is also stored
  in %s/secret.key (readable only by you); if you lose both, your data is lost.

`, dir, secretKey, dir)
}
