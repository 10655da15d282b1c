package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/quarantine/importer"
)

// runExport makes a migration bundle for another custodian, from its card:
// phc export --to CARD.json [--persona P …] [--out FILE].
func runExport(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "export", &c)
	to := fs.String("to", "", "the recipient custodian's card (the file its phc card wrote)")
	out := fs.String("out", "", "write the bundle to this file (mode 0600) instead of stdout")
	var personas multiFlag
	fs.Var(&personas, "persona", "export only the claims of this persona (repeat for several)")
	partClaims := fs.Int("part-claims", 0, "make a bundle in parts of at most this many claims each: a zip archive, for a vault too large for one bundle")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *to == "" || fs.NArg() != 0 {
		return usageError("usage: phc export --to CARD.json [--persona P …] [--part-claims N] [--out FILE]")
	}
	card, err := os.ReadFile(*to)
	if err != nil {
		return err
	}
	if !json.Valid(card) {
		return fmt.Errorf("%s is not JSON: a card is what phc card prints", printable(*to))
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	cl.HTTP.Timeout = bulkTimeout
	fmt.Fprintln(env.Stderr, "making the bundle (the daemon collects, signs and encrypts it first) …")
	bundle, err := cl.ExportBundle(ctx, custodian.ExportInput{To: card, Personas: personas, PartClaims: *partClaims})
	if err != nil {
		return err
	}
	defer bundle.Body.Close()
	var w io.Writer = env.Stdout
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Chmod(0o600); err != nil {
			return err
		}
		w = f
	}
	n, err := io.Copy(w, &progress{r: bundle.Body, w: env.Stderr, total: bundle.Length, every: 16 << 20})
	if err != nil {
		return err
	}
	if f, ok := w.(*os.File); ok && *out != "" {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	man, err := bundle.Manifest()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "bundle %s for %s: %d bytes; %d claims (%d versions), %d personas, %d entities, %d summaries, %d identities\n",
		printable(man.BundleID), printable(man.Recipient), n, man.Counts["claims"], man.Counts["versions"], man.Counts["personas"],
		man.Counts["entities"], man.Counts["summaries"], man.Counts["identities"])
	if parts := man.Counts["parts"]; parts > 0 {
		fmt.Fprintf(env.Stderr, "in %d parts, a zip archive: the other custodian imports it whole (phc import FILE)\n", parts)
	}
	if lost := man.Counts["lost"]; lost > 0 {
		fmt.Fprintf(env.Stderr, "%d records stay behind:\n", lost)
		if man.LossReport != nil {
			for _, l := range *man.LossReport {
				fmt.Fprintf(env.Stderr, "  %s %s: %s\n", l.Dropped, printable(l.Record), printable(l.Reason))
			}
		}
	}
	return nil
}

// multiFlag is a flag that may be given several times.
type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint([]string(*m)) }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// runImport imports a migration bundle into the quarantine: phc import FILE.
func runImport(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "import", &c)
	from := fs.String("from", "", "the export's source: "+strings.Join(importer.Names(), ", ")+" (default: detected; a bundle if none)")
	mapFile := fs.String("map", "", "a key map: a JSON file from the source's category to a key (or {\"key\", \"kind\"})")
	files, err := idsAndFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageError("usage: phc import BUNDLE | phc import [--from SOURCE] [--map FILE] EXPORT (a file, a zip, or a folder)")
	}
	file := files[0]
	if *from != "" || *mapFile != "" || isMemoryExport(file) {
		return importExport(ctx, env, c, *from, *mapFile, file)
	}
	if isZipFile(file) {
		return importParts(ctx, env, c, file)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	cl, err := ownerBulkClient(env, c)
	if err != nil {
		return err
	}
	rep, err := cl.ImportBundle(ctx, raw)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "bundle %s from %s: %d records held in the quarantine (%d blocked); nothing is readable until you adopt it\n",
		printable(rep.BundleID), printable(rep.Source), len(rep.Records), rep.Counts["blocked"])
	for _, r := range rep.Records {
		fmt.Fprintf(env.Stdout, "  %s %s %s %s", r.ID, r.Status, r.Kind, printable(r.Record))
		if r.Key != "" {
			fmt.Fprintf(env.Stdout, " (%s)", printable(r.Key))
		}
		fmt.Fprintln(env.Stdout, protection(r))
		for _, p := range r.Problems {
			fmt.Fprintf(env.Stdout, "    %s\n", printable(p))
		}
	}
	for _, l := range rep.LossReport {
		fmt.Fprintf(env.Stdout, "  lost: %s %s: %s\n", l.Dropped, printable(l.Record), printable(l.Reason))
	}
	return nil
}

// runQuarantine lists or rejects held records: phc quarantine [--status S],
// phc quarantine reject ID…|--all.
func runQuarantine(ctx context.Context, env *Env, args []string) error {
	var c common
	if len(args) > 0 && args[0] == "adopt" {
		fs := newFlags(env, "quarantine adopt", &c)
		all := fs.Bool("all", false, "adopt every held record")
		var personas, mappings multiFlag
		fs.Var(&personas, "persona", "put the adopted claims in this persona (repeat; default: their personas that exist here)")
		fs.Var(&mappings, "map", "map a foreign identity to a local one: foreign:cus_…/ID=CONSUMER (or =owner); repeat")
		ids, err := idsAndFlags(fs, args[1:]) // IDs before the flags, or after
		if err != nil {
			return err
		}
		if *all == (len(ids) > 0) {
			return usageError("usage: phc quarantine adopt ID… | --all [--persona P …] [--map foreign:cus_…/ID=NAME …]")
		}
		in := custodian.AdoptInput{IDs: ids, All: *all, Personas: personas}
		if len(mappings) > 0 {
			m := map[string]string{}
			for _, kv := range mappings {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return usageError("--map takes foreign:cus_…/ID=NAME")
				}
				m[k] = v
			}
			in.Identities = m
		}
		cl, err := ownerBulkClient(env, c)
		if err != nil {
			return err
		}
		out, err := cl.Adopt(ctx, in)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "adopted %d records (revision %d)", out.Adopted, out.Revision)
		if len(out.ReadBy) == 0 {
			fmt.Fprintln(env.Stdout, ": no app reads them until you grant it")
			return nil
		}
		fmt.Fprintln(env.Stdout, "; read now, by a grant in force or by auto_grant, by:")
		for _, app := range slices.Sorted(maps.Keys(out.ReadBy)) {
			fmt.Fprintf(env.Stdout, "  %s: %d of the adopted claims\n", printable(app), out.ReadBy[app])
		}
		return nil
	}
	if len(args) > 0 && args[0] == "unblock" {
		fs := newFlags(env, "quarantine unblock", &c)
		var remove multiFlag
		fs.Var(&remove, "remove", "an unknown restriction type to remove from the held record (repeat)")
		id, ok, err := parseOne(fs, args[1:])
		if err != nil {
			return err
		}
		if !ok || len(remove) == 0 {
			return usageError("usage: phc quarantine unblock ID --remove TYPE …")
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		out, err := cl.Unblock(ctx, id, custodian.UnblockInput{Remove: remove})
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s is %s\n", printable(id), printable(out.Status))
		return nil
	}
	if len(args) > 0 && args[0] == "reject" {
		fs := newFlags(env, "quarantine reject", &c)
		all := fs.Bool("all", false, "reject every held record")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if *all == (fs.NArg() > 0) {
			return usageError("usage: phc quarantine reject ID… | --all")
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		out, err := cl.RejectHeld(ctx, custodian.QuarantineRejectInput{IDs: fs.Args(), All: *all})
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "rejected %d records\n", out.Rejected)
		return nil
	}
	fs := newFlags(env, "quarantine", &c)
	status := fs.String("status", "", "only records of this status (quarantined, blocked)")
	problem := fs.String("problem", "", `only records with a problem containing this text (e.g. "conflicts", "identity unmapped")`)
	if err := parse(fs, args); err != nil {
		return err
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	for cursor := ""; ; {
		page, err := cl.Quarantine(ctx, custodian.QuarantineQuery{Status: *status, Problem: *problem, Cursor: cursor, Limit: 1000})
		if err != nil {
			return err
		}
		for _, r := range page.Records {
			printHeld(env.Stdout, r)
		}
		if cursor = page.NextCursor; cursor == "" {
			return nil
		}
	}
}

// printHeld writes held record r: what it is, where it came from, what it
// would be adopted with, its problems, and for a claim its value and how
// it differs from the claim its key holds here.
func printHeld(w io.Writer, r custodian.QuarantineRecord) {
	fmt.Fprintf(w, "%s %s %s %s from %s", r.ID, r.Status, r.Kind, printable(r.Record), printable(r.Source))
	if r.Key != "" {
		fmt.Fprintf(w, " (%s)", printable(r.Key))
	}
	fmt.Fprintln(w, protection(r))
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  %s\n", printable(p))
	}
	if r.Value != nil {
		fmt.Fprintf(w, "  value: %s\n", printable(string(r.Value)))
	}
	if h := r.Here; h != nil {
		fmt.Fprintf(w, "  here: %s has %s\n", h.Claim, printable(string(h.Value)))
		printDiff(w, "  ", h.Diff)
	}
}

// protection says what a held record would be adopted with: its tier
// and restrictions (", tier standard, restricted no_training"), or "".
func protection(r custodian.QuarantineRecord) string {
	var out string
	if r.Sensitivity != "" {
		out += ", tier " + printable(r.Sensitivity)
	}
	if len(r.Restrictions) > 0 {
		out += ", restricted " + printable(strings.Join(r.Restrictions, " "))
	}
	return out
}

// progress reports on w, every so many bytes, how much of r was read.
type progress struct {
	r           io.Reader
	w           io.Writer
	n, total    int64
	every, mark int64
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.n >= p.mark+p.every {
		p.mark = p.n - p.n%p.every
		if p.total > 0 {
			fmt.Fprintf(p.w, "  %d of %d MB\n", p.n>>20, p.total>>20)
		} else {
			fmt.Fprintf(p.w, "  %d MB\n", p.n>>20)
		}
	}
	return n, err
}
