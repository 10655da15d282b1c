package cli

import (
	"context"
	"fmt"
	"sort"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
)

func runUnlock(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "unlock", &c)
	skFile := fs.String("secret-key-file", "", "file holding the Secret Key (default: $PHC_SECRET_KEY, else DIR/secret.key, else a prompt)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unlock takes no arguments (see phc unlock -h)")
	}
	cl, err := newClient(env, c, false)
	if err != nil {
		return err
	}
	pw, err := password(env, false)
	if err != nil {
		return err
	}
	sk, err := findSecretKey(env, c.data, *skFile)
	if err != nil {
		return err
	}
	_, err = cl.Unlock(ctx, custodian.UnlockInput{Password: string(pw), SecretKey: sk.text})
	if client.IsConstraint(err, "conflict") {
		fmt.Fprintln(env.Stdout, "already unlocked")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "unlocked")
	offerToStore(env, c.data, sk)
	return nil
}

func runLock(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "lock", &c)
	if err := parse(fs, args); err != nil {
		return err
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	if err := cl.Lock(ctx); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "locked")
	return nil
}

func runStatus(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "status", &c)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	cl, err := newClient(env, c, false)
	if err != nil {
		return err
	}
	if s, err := newClient(env, c, true); err == nil {
		// The session goes only to its own daemon: when PHC_ADDR (or
		// --addr) names another, say so, and show its public status.
		if err := s.CheckToken(); err != nil {
			fmt.Fprintf(env.Stderr, "warning: %s\n", printable(err.Error()))
		} else {
			cl = s
		}
	}
	st, err := cl.Status(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, st)
	}
	state := "unlocked"
	if st.Locked {
		state = "locked"
	}
	fmt.Fprintf(env.Stdout, "vault: %s\n", state)
	if st.FieldCount != nil {
		fmt.Fprintf(env.Stdout, "fields: %d\nrevision: %d\n", *st.FieldCount, st.Revision)
		cats := make([]string, 0, len(st.Categories))
		for cat := range st.Categories {
			cats = append(cats, cat)
		}
		sort.Strings(cats)
		for _, cat := range cats {
			fmt.Fprintf(env.Stdout, "  %-20s %d\n", printable(cat), st.Categories[cat])
		}
	}
	return nil
}
