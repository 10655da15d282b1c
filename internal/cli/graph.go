package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
	"github.com/phc-project/phc/internal/daemon"
	"github.com/phc-project/phc/internal/vault"
	berrors "go.etcd.io/bbolt/errors"
)

// errInUse: the data dir's store is held by a running daemon.
var errInUse = errors.New("the data dir is in use by a running daemon")

// offline opens the data dir of a stopped daemon, unlocks it with the
// password (PHC_PASSWORD or a prompt) and runs fn as the owner. It fails
// with errInUse when a daemon holds the store.
func offline(ctx context.Context, env *Env, dir string, fn func(*custodian.Service, custodian.Principal) error) (err error) {
	if !vault.Exists(dir) {
		return fmt.Errorf("no vault in %s", dir)
	}
	// Warnings only: an offline command prints its result, not the
	// service's comings and goings.
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	core, err := daemon.Open(daemon.Options{Dir: dir, Log: log, IdleLock: -1, Offline: true, LoadGC: holdGC})
	if errors.Is(err, berrors.ErrTimeout) {
		return errInUse
	}
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, core.Close()) }()
	svc := core.Svc
	pw, err := password(env, false)
	if err != nil {
		return err
	}
	sk, err := findSecretKey(env, dir, "")
	if err != nil {
		return err
	}
	token, err := svc.Unlock(ctx, pw, sk.text)
	if err != nil {
		return err
	}
	p, err := svc.Authenticate(ctx, token)
	if err != nil {
		return err
	}
	return fn(svc, p)
}

func runCheck(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "check", &c)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	var rep custodian.CheckReport
	err := offline(ctx, env, c.data, func(svc *custodian.Service, p custodian.Principal) error {
		var err error
		rep, err = svc.Check(ctx, p)
		return err
	})
	if errors.Is(err, errInUse) {
		var cl *client.Client
		if cl, err = ownerBulkClient(env, c); err == nil {
			rep, err = cl.Check(ctx)
		}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		if err := printJSON(env.Stdout, rep); err != nil {
			return err
		}
	} else {
		for _, p := range slices.Concat(rep.Graph.Problems, rep.Receipts.Problems, rep.Summaries, rep.Claims) {
			fmt.Fprintln(env.Stdout, printable(p))
		}
	}
	if !rep.OK {
		return fmt.Errorf("check failed: graph %d edges (%d missing, %d extra) at watermark %d, revision %d; receipts ok=%v; %d claims differ from their metas",
			rep.Graph.Edges, rep.Graph.Missing, rep.Graph.Extra, rep.Graph.Watermark, rep.Graph.Revision, rep.Receipts.OK, len(rep.Claims))
	}
	if !*asJSON {
		fmt.Fprintf(env.Stdout, "ok: the graph agrees with the store (%d edges at revision %d); %d receipts, chain intact\n",
			rep.Graph.Edges, rep.Graph.Revision, rep.Receipts.Count)
	}
	return nil
}

func runGraph(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usageError("usage: phc graph rebuild|export [--format nquads|prov-jsonld] [--out FILE]")
	}
	switch args[0] {
	case "rebuild":
		var c common
		fs := newFlags(env, "graph rebuild", &c)
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		var rev uint64
		err := offline(ctx, env, c.data, func(svc *custodian.Service, p custodian.Principal) error {
			var err error
			rev, err = svc.RebuildGraph(ctx, p)
			return err
		})
		if errors.Is(err, errInUse) {
			var cl *client.Client
			if cl, err = ownerBulkClient(env, c); err == nil {
				rev, err = cl.RebuildGraph(ctx)
			}
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "rebuilt the graph at revision %d\n", rev)
		return nil
	case "export":
		var c common
		fs := newFlags(env, "graph export", &c)
		format := fs.String("format", "nquads", "nquads or prov-jsonld")
		outPath := fs.String("out", "", "write to this file (mode 0600) instead of standard output")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if *format != "nquads" && *format != "prov-jsonld" {
			return usageError("--format must be nquads or prov-jsonld")
		}
		var buf bytes.Buffer
		err := offline(ctx, env, c.data, func(svc *custodian.Service, p custodian.Principal) error {
			if *format == "nquads" {
				return svc.ExportGraph(ctx, p, &buf)
			}
			return svc.ExportProv(ctx, p, &buf)
		})
		if errors.Is(err, errInUse) {
			buf.Reset()
			var cl *client.Client
			if cl, err = ownerBulkClient(env, c); err == nil {
				var raw []byte
				raw, err = cl.ExportGraph(ctx, *format)
				buf.Write(raw)
			}
		}
		if err != nil {
			return err
		}
		if *outPath == "" {
			_, err := io.Copy(env.Stdout, &buf)
			return err
		}
		return writeFile0600(*outPath, buf.Bytes())
	}
	return usageError("unknown graph command %q (rebuild, export)", args[0])
}
