package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
)

// runUI opens the owner's console: with the CLI's session it mints a
// one-time sign-in link bound to that session and opens it in the browser
// (or prints it, with --print or when no browser opens). With no session
// (a locked vault) it points at the sign-in page, where the unlock signs in.
func runUI(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "ui", &c)
	printOnly := fs.Bool("print", false, "print the sign-in link instead of opening a browser")
	if err := parse(fs, args); err != nil {
		return err
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		plain, perr := newClient(env, c, false)
		if perr != nil {
			return perr
		}
		fmt.Fprintf(env.Stdout, "no owner session (the vault is locked?): open %s/ui and sign in with your password and Secret Key\n", plain.base)
		return nil
	}
	var out struct {
		Path string `json:"path"`
	}
	if err := cl.do(ctx, "POST", "/ui/link", nil, &out); err != nil {
		return err
	}
	link := cl.base + out.Path
	if !*printOnly {
		open := env.OpenBrowser
		if open == nil {
			open = openBrowser
		}
		if err := open(link); err == nil {
			fmt.Fprintf(env.Stdout, "opened the console at %s/ui in your browser\n", cl.base)
			return nil
		}
	}
	// The link is the owner's for two minutes and only once: it goes to
	// the person's terminal, never to a log.
	fmt.Fprintf(env.Stdout, "open this link within two minutes to sign in to the console (it works once):\n%s\n", link)
	return nil
}

// openBrowser opens url with the system's opener.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		if _, err := exec.LookPath("xdg-open"); err != nil {
			return errors.New("no browser opener")
		}
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
