package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"time"
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
		fmt.Fprintf(env.Stdout, "no owner session (the vault is locked?): open %s/ui and sign in with your password and Secret Key\n", plain.Base)
		return nil
	}
	path, err := cl.UILink(ctx)
	if err != nil {
		return err
	}
	link := cl.Base + path
	if !*printOnly {
		open := env.OpenBrowser
		if open == nil {
			open = func(url string) error { return openBrowser(env, url) }
		}
		switch err := open(link); {
		case err == nil:
			fmt.Fprintf(env.Stdout, "opened the console at %s/ui in your browser\n", cl.Base)
			return nil
		case errors.Is(err, errOpenerBusy):
			// The opener neither failed nor finished: a browser may be on
			// its way, or nothing at all. The link is printed all the
			// same (it works once, so at most one of the two signs in).
			fmt.Fprintf(env.Stdout, "asked your browser to open the console; if it does not, open this link within two minutes to sign in (it works once):\n%s\n", link)
			return nil
		}
	}
	// The link is the owner's for two minutes and only once: it goes to
	// the person's terminal, never to a log.
	fmt.Fprintf(env.Stdout, "open this link within two minutes to sign in to the console (it works once):\n%s\n", link)
	return nil
}

// errOpenerBusy is openBrowser's answer when the opener still runs after
// openerWait: some openers (xdg-open starting a browser that was not
// running) only return when the browser exits.
var errOpenerBusy = errors.New("the browser opener has not finished")

// openerWait is how long openBrowser waits for the opener's verdict.
const openerWait = 5 * time.Second

// openBrowser opens url with the system's opener and reports whether it
// did: with no display to show a browser on (Linux and other Unixes: no
// DISPLAY nor WAYLAND_DISPLAY), no opener, or an opener that fails, it
// returns an error, so that phc ui prints the link instead of claiming to
// have opened it.
func openBrowser(env *Env, url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		if env.Getenv("DISPLAY") == "" && env.Getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("no display for a browser")
		}
		p, err := exec.LookPath("xdg-open")
		if err != nil {
			return errors.New("no browser opener")
		}
		cmd = exec.Command(p, url)
	}
	// The opener's complaints are not the owner's business: phc ui says
	// what happened.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(openerWait)
	defer timer.Stop()
	select {
	case err := <-done:
		return err // a failing opener exits with a status other than 0
	case <-timer.C:
		return errOpenerBusy
	}
}
