package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
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
	var out struct {
		Token string `json:"token"`
	}
	err = cl.do(ctx, "POST", "/context/unlock", map[string]string{"password": string(pw), "secret_key": sk.text}, &out)
	if e, ok := errors.AsType[*apiError](err); ok && e.Constraint == "conflict" {
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
	if err := ownerDo(ctx, env, c, "POST", "/context/lock", nil, nil); err != nil {
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
		cl.token = s.token
		// The session goes only to its own daemon: when PHC_ADDR (or
		// --addr) names another, say so, and show its public status.
		if err := cl.refusedSession(); err != nil {
			fmt.Fprintf(env.Stderr, "warning: %s\n", printable(err.Error()))
			cl.token = ""
		}
	}
	var st struct {
		Initialized bool           `json:"initialized"`
		Locked      bool           `json:"locked"`
		FieldCount  *int           `json:"field_count,omitempty"`
		Categories  map[string]int `json:"categories,omitempty"`
		Revision    uint64         `json:"revision,omitempty"`
	}
	if err := cl.do(ctx, "GET", "/context/status", nil, &st); err != nil {
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
