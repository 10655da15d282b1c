package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/phc-project/phc/internal/vault"
)

// secretKeyEnv names the environment variable that may hold the Secret Key.
const secretKeyEnv = "PHC_SECRET_KEY"

// foundSecretKey is a Secret Key and where it came from.
type foundSecretKey struct {
	text string
	// typed is set when the owner typed it at a prompt, because DIR had no
	// secret.key: once it has unlocked the vault, offerToStore asks
	// whether to keep it there.
	typed bool
}

// findSecretKey finds the vault's Secret Key: in the file named by
// --secret-key-file, else in PHC_SECRET_KEY, else in DIR/secret.key, else
// (when DIR has none and stdin is a terminal) by asking for it.
func findSecretKey(env *Env, dir, file string) (foundSecretKey, error) {
	if file != "" {
		sk, err := readSecretKeyText(file)
		return foundSecretKey{text: sk}, err
	}
	if s := env.Getenv(secretKeyEnv); s != "" {
		sk, err := vault.CanonicalSecretKey(stripKitLabel(s))
		if err != nil {
			return foundSecretKey{}, fmt.Errorf("$%s is not a Secret Key: type it as your emergency kit shows it (PHC1-XXXXXX-…)", secretKeyEnv)
		}
		return foundSecretKey{text: sk}, nil
	}
	path := filepath.Join(dir, "secret.key")
	sk, err := vault.ReadSecretKeyFile(dir)
	if err == nil {
		return foundSecretKey{text: sk}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return foundSecretKey{}, fmt.Errorf("read the Secret Key from %s: %w", path, err)
	}
	if env.IsTerminal == nil || !env.IsTerminal() || env.ReadPassword == nil {
		return foundSecretKey{}, fmt.Errorf("no Secret Key: %s does not exist. Give the one on your emergency kit with %s='PHC1-…' or --secret-key-file FILE (or run on a terminal to type it)", path, secretKeyEnv)
	}
	typed, err := env.ReadPassword("Secret Key (from your emergency kit): ")
	if err != nil {
		return foundSecretKey{}, fmt.Errorf("read the Secret Key: %w", err)
	}
	sk, err = vault.CanonicalSecretKey(stripKitLabel(string(typed)))
	clear(typed)
	if err != nil {
		return foundSecretKey{}, errors.New("that is not a Secret Key: type it as your emergency kit shows it (PHC1-XXXXXX-…)")
	}
	return foundSecretKey{text: sk, typed: true}, nil
}

// offerToStore asks, after a typed Secret Key unlocked the vault, whether
// to keep it in DIR/secret.key (mode 0600) so it need not be typed again.
func offerToStore(env *Env, dir string, sk foundSecretKey) {
	if !sk.typed {
		return
	}
	path := filepath.Join(dir, "secret.key")
	fmt.Fprintf(env.Stderr, "Store the Secret Key in %s (readable only by you) so you need not type it again? [y/N] ", path)
	line, _ := bufio.NewReader(io.LimitReader(env.Stdin, 256)).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		fmt.Fprintln(env.Stderr, "not stored: you will be asked for it again")
		return
	}
	if err := vault.WriteSecretKeyFile(dir, sk.text); err != nil {
		fmt.Fprintf(env.Stderr, "could not store the Secret Key: %v\n", err)
		return
	}
	fmt.Fprintf(env.Stderr, "stored in %s\n", path)
}

// stripKitLabel drops the "Secret Key:" label the emergency kit prints
// before the key, so a line copied from it whole is taken as is.
func stripKitLabel(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= len("secret key:") && strings.EqualFold(s[:len("secret key:")], "secret key:") {
		s = s[len("secret key:"):]
	}
	return s
}

// readSecretKeyText reads Secret Key text from a small file: the key
// alone, or the emergency kit's "Secret Key: …" line.
func readSecretKeyText(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read the Secret Key: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("read the Secret Key: %w", err)
	}
	defer clear(raw)
	for line := range strings.Lines(string(raw)) {
		if sk, err := vault.CanonicalSecretKey(stripKitLabel(line)); err == nil {
			return sk, nil
		}
	}
	return "", fmt.Errorf("%s holds no Secret Key (a line PHC1-XXXXXX-…, as on your emergency kit)", path)
}
