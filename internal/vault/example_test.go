package vault_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/phc-project/phc/internal/vault"
)

func Example() {
	dir, err := os.MkdirTemp("", "phc-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dir = filepath.Join(dir, "data")
	password := []byte("correct horse battery staple")

	// phc init: create the vault and show the Secret Key once.
	secretKey, err := vault.Create(dir, password)
	if err != nil {
		log.Fatal(err)
	}

	// Daemon start: open locked, unlock with password and Secret Key.
	v, err := vault.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	if err := v.Unlock(password, secretKey); err != nil {
		log.Fatal(err)
	}
	defer v.Lock()

	// Seal a field bound to its record, and open it again.
	aad := []byte("clm_ABC/v1/value")
	ct, err := v.Seal("claims", aad, []byte("prefers tea"))
	if err != nil {
		log.Fatal(err)
	}
	pt, err := v.Open("claims", aad, ct)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(pt))

	// The same ciphertext does not open for another record.
	_, err = v.Open("claims", []byte("clm_XYZ/v1/value"), ct)
	fmt.Println(err)
	// Output:
	// prefers tea
	// vault: decryption failed
}
