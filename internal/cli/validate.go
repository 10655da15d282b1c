package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/phc-project/phc/schema"
)

// maxValidate bounds the document phc validate reads.
const maxValidate = 64 << 20

// runValidate checks a document against the PHC JSON binding, with no
// daemon: phc validate FILE [--as NAME]. It prints each violation's path,
// keyword and message, and exits 1 when there is one.
func runValidate(ctx context.Context, env *Env, args []string) error {
	fs := newBareFlags(env, "validate")
	as := fs.String("as", "", "the document's kind: "+strings.Join(schema.Names, ", ")+" (default: told from its members)")
	files, err := idsAndFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageError("usage: phc validate FILE [--as NAME] (FILE - reads standard input)")
	}
	raw, err := readDocument(env, files[0])
	if err != nil {
		return err
	}
	if *as != "" && !slices.Contains(schema.Names, *as) {
		return usageError("--as is one of %s", strings.Join(schema.Names, ", "))
	}
	v, err := schema.New()
	if err != nil {
		return err
	}
	lim := schema.DefaultLimits()
	lim.MaxBytes = maxValidate
	doc, err := schema.Decode(raw, lim)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("%s: %w", printable(files[0]), err)}
	}
	name := *as
	if name == "" {
		if name = schema.Kind(doc); name == "" {
			return &exitError{code: 1, err: fmt.Errorf("%s: cannot tell which document this is: name it with --as (%s)", printable(files[0]), strings.Join(schema.Names, ", "))}
		}
	}
	vs := v.Validate(name, doc)
	if len(vs) == 0 {
		fmt.Fprintf(env.Stdout, "%s: a valid %s\n", printable(files[0]), name)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s: not a valid %s:\n", printable(files[0]), name)
	for _, x := range vs {
		path := x.Path
		if path == "" {
			path = "(the document)"
		}
		fmt.Fprintf(env.Stdout, "  %s  %s  %s\n", printable(path), printable(x.Keyword), printable(x.Message))
	}
	if len(vs) == 1 {
		return &exitError{code: 1, err: errors.New("1 violation")}
	}
	return &exitError{code: 1, err: fmt.Errorf("%d violations", len(vs))}
}

// readDocument reads file (- for standard input), at most maxValidate
// bytes.
func readDocument(env *Env, file string) ([]byte, error) {
	var r io.Reader
	if file == "-" {
		r = env.Stdin
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxValidate+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxValidate {
		return nil, errors.New("the document is over 64 MiB")
	}
	return raw, nil
}
