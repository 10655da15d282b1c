package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"golang.org/x/term"
)

func osEnv() *Env {
	return &Env{
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		IsTerminal: func() bool { return term.IsTerminal(int(os.Stdin.Fd())) },
		ReadPassword: func(prompt string) ([]byte, error) {
			fmt.Fprint(os.Stderr, prompt)
			pw, err := term.ReadPassword(int(os.Stdin.Fd()))
			fmt.Fprintln(os.Stderr)
			return pw, err
		},
	}
}

var errNoPassword = errors.New("no password: set PHC_PASSWORD or run from a terminal")

// minPasswordRunes is the shortest password a new vault takes. The Secret
// Key guards against guessing offline, but the password alone guards the
// vault against someone holding the machine with its secret.key.
const minPasswordRunes = 12

// password returns the owner's password from PHC_PASSWORD or, failing that,
// a terminal prompt (twice, when confirm is set). ok is false when neither
// is available.
func password(env *Env, confirm bool) ([]byte, error) {
	if pw := env.Getenv("PHC_PASSWORD"); pw != "" {
		if _, err := checkPassword([]byte(pw)); err != nil {
			return nil, err
		}
		if confirm {
			if err := checkNewPassword([]byte(pw)); err != nil {
				return nil, fmt.Errorf("PHC_PASSWORD: %w", err)
			}
		}
		return []byte(pw), nil
	}
	if env.IsTerminal == nil || !env.IsTerminal() {
		return nil, errNoPassword
	}
	pw, err := env.ReadPassword("Password: ")
	if err != nil {
		return nil, fmt.Errorf("read password: %w", err)
	}
	if _, err := checkPassword(pw); err != nil {
		return nil, err
	}
	if confirm {
		if err := checkNewPassword(pw); err != nil {
			return nil, err
		}
		again, err := env.ReadPassword("Password again: ")
		if err != nil {
			return nil, fmt.Errorf("read password: %w", err)
		}
		if !bytes.Equal(pw, again) {
			return nil, errors.New("the passwords differ")
		}
	}
	return pw, nil
}

// checkPassword refuses passwords the HTTP API could not carry: JSON holds
// only valid UTF-8, so such a vault could never be unlocked over it.
func checkPassword(pw []byte) ([]byte, error) {
	if len(pw) == 0 {
		return nil, errors.New("empty password")
	}
	if !utf8.Valid(pw) {
		return nil, errors.New("the password is not valid UTF-8 (check the terminal's or PHC_PASSWORD's encoding)")
	}
	return pw, nil
}

// checkNewPassword refuses a new vault's password shorter than
// minPasswordRunes.
func checkNewPassword(pw []byte) error {
	if n := utf8.RuneCount(pw); n < minPasswordRunes {
		return fmt.Errorf("the password is %d characters long: a new vault needs at least %d (a few words make a good one)", n, minPasswordRunes)
	}
	return nil
}
