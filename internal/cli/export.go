package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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
	if err := parse(fs, args); err != nil {
		return err
	}
	if *to == "" || fs.NArg() != 0 {
		return usageError("usage: phc export --to CARD.json [--persona P …] [--out FILE]")
	}
	card, err := os.ReadFile(*to)
	if err != nil {
		return err
	}
	if !json.Valid(card) {
		return fmt.Errorf("%s is not JSON: a card is what phc card prints", printable(*to))
	}
	body, err := json.Marshal(map[string]any{"to": json.RawMessage(card), "personas": []string(personas)})
	if err != nil {
		return err
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", cl.base+"/phc/v1/export", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+cl.token)
	resp, err := cl.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the daemon at %s (is phc serve running?): %w", cl.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		e := &apiError{Status: resp.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Constraint == "" {
			e.Message, e.Constraint = http.StatusText(resp.StatusCode), "unknown"
		}
		return e
	}
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
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return err
	}
	if f, ok := w.(*os.File); ok && *out != "" {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	var man struct {
		BundleID   string         `json:"bundle_id"`
		Recipient  string         `json:"recipient"`
		Counts     map[string]int `json:"counts"`
		LossReport *[]struct {
			Record, Dropped, Reason string
		} `json:"loss_report"`
	}
	if err := json.Unmarshal([]byte(resp.Header.Get("PHC-Bundle-Manifest")), &man); err != nil {
		return errors.New("the daemon's answer has no bundle manifest")
	}
	fmt.Fprintf(env.Stderr, "bundle %s for %s: %d bytes; %d claims (%d versions), %d personas, %d entities, %d summaries, %d identities\n",
		printable(man.BundleID), printable(man.Recipient), n, man.Counts["claims"], man.Counts["versions"], man.Counts["personas"],
		man.Counts["entities"], man.Counts["summaries"], man.Counts["identities"])
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
