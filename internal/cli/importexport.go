package cli

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/phc-project/phc/internal/humanfmt"
	"github.com/phc-project/phc/quarantine/importer"
)

// isMemoryExport reports whether file is an export some importer
// recognises (a folder always is: a bundle is a file).
func isMemoryExport(file string) bool {
	st, err := os.Stat(file)
	if err != nil {
		return false
	}
	if st.IsDir() {
		return true
	}
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = importer.Lookup("", &importer.Input{Name: filepath.Base(file), R: f, Size: st.Size(), Limits: importer.DefaultLimits})
	return err == nil
}

// importExport sends another memory system's export (a file, or a folder
// zipped on the way) to the daemon, which holds its memories in the
// quarantine, and says what happened: phc import [--from SOURCE] [--map
// FILE] EXPORT.
func importExport(ctx context.Context, env *Env, c common, from, mapFile, file string) error {
	var mapping importer.Map
	if mapFile != "" {
		var err error
		if mapping, err = importer.ReadMap(mapFile); err != nil {
			return err
		}
	}
	if from == "" {
		from = "auto"
	}
	f, size, err := openExport(file)
	if err != nil {
		return err
	}
	defer f.Close()
	cl, err := ownerBulkClient(env, c)
	if err != nil {
		return err
	}
	var body io.Reader = f
	if env.IsTerminal() {
		body = &progress{r: f, w: env.Stderr, total: size, every: 16 << 20}
	}
	out, err := cl.ImportExport(ctx, from, filepath.Base(file), mapping, body, size)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: %d memories seen, %d held in the quarantine (import %s), %d dropped, in %s\n",
		out.Source, out.Seen, out.Held, out.ImportID, len(out.Dropped), humanfmt.Duration(time.Duration(out.TookMS)*time.Millisecond))
	for _, d := range out.Dropped {
		fmt.Fprintf(env.Stdout, "  dropped: %s: %s\n", printable(d.Location), printable(d.Reason))
	}
	fmt.Fprintln(env.Stdout, "Nothing of it is used until you adopt it: phc quarantine, then phc quarantine adopt ID… (or --all).")
	return nil
}

// openExport opens file, or a zip of the folder file made in an unlinked
// temporary file (symbolic links left out), and returns its size.
func openExport(file string) (*os.File, int64, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, 0, err
	}
	if !st.IsDir() {
		f, err := os.Open(file)
		return f, st.Size(), err
	}
	tmp, err := os.CreateTemp("", "phc-export-*.zip")
	if err != nil {
		return nil, 0, err
	}
	os.Remove(tmp.Name())
	zw := zip.NewWriter(tmp)
	err = filepath.WalkDir(file, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(file, p)
		if err != nil {
			return err
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(w, src)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	var size int64
	if err == nil {
		size, err = tmp.Seek(0, io.SeekCurrent)
	}
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		tmp.Close()
		return nil, 0, err
	}
	return tmp, size, nil
}

// isZipFile reports whether file begins a zip archive (a bundle in parts,
// when no importer claims it).
func isZipFile(file string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4)
	_, err = io.ReadFull(f, head)
	return err == nil && importer.IsZip(head)
}

// importParts sends a bundle in parts (the zip archive phc export
// --part-claims wrote) to the daemon, which holds it whole or not at all.
func importParts(ctx context.Context, env *Env, c common, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	cl, err := ownerBulkClient(env, c)
	if err != nil {
		return err
	}
	rep, err := cl.ImportBundleParts(ctx, &progress{r: f, w: env.Stderr, total: st.Size(), every: 64 << 20}, st.Size())
	if err != nil {
		return err
	}
	held := 0
	for _, n := range rep.Counts {
		held += n
	}
	fmt.Fprintf(env.Stdout, "bundle %s from %s, in parts: %d records held in the quarantine (%d blocked); nothing is readable until you adopt it (phc quarantine)\n",
		printable(rep.BundleID), printable(rep.Source), held, rep.Counts["blocked"])
	for _, l := range rep.LossReport {
		fmt.Fprintf(env.Stdout, "  lost: %s %s: %s\n", l.Dropped, printable(l.Record), printable(l.Reason))
	}
	return nil
}
