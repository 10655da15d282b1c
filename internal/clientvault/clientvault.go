// Package clientvault is the wire side of Client-Vault v=1 (docs/formats/reference.md)
// that the daemon and the local vault hook share: the Client-Vault header
// (an RFC 9651 dictionary, parsed and written with
// github.com/dunglas/httpsfv), the hook's key files, discovery of the
// resolve endpoint through the RFC 9728 metadata, the resolve call, and
// the replacement of references in a tool call's arguments.
//
// K, the 256-bit secret of one server origin and one reader profile, lives
// only in its key file (0600) and in the Authorization header of a resolve
// request; the header carries only kid = base64(SHA-256(K)).
package clientvault

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/phc-project/phc/internal/atomicfile"
	"github.com/phc-project/phc/internal/valueref"
)

// HeaderName is the request header a local vault adds to every MCP
// request.
const HeaderName = "Client-Vault"

// ErrHeader is a Client-Vault header that is not v=1 with a 32-byte kid.
var ErrHeader = errors.New("client-vault: malformed header")

// ParseHeader parses the values of Client-Vault headers as one RFC 9651
// dictionary and returns its kid, standard base64 of 32 bytes. It accepts
// v=1 and a kid byte sequence of 32 bytes; members it does not know are
// ignored, as RFC 9651 asks.
func ParseHeader(values []string) (string, error) {
	d, err := httpsfv.UnmarshalDictionary(values)
	if err != nil {
		return "", ErrHeader
	}
	v, ok := d.Get("v")
	if it, isItem := v.(httpsfv.Item); !ok || !isItem || it.Value != int64(1) {
		return "", ErrHeader
	}
	k, ok := d.Get("kid")
	it, isItem := k.(httpsfv.Item)
	if !ok || !isItem {
		return "", ErrHeader
	}
	b, isBytes := it.Value.([]byte)
	if !isBytes || len(b) != sha256.Size {
		return "", ErrHeader
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Kid is base64(SHA-256(k)), with padding.
func Kid(k []byte) string { return valueref.Kid(k) }

// Header is the Client-Vault header value for K: v=1, kid=:…:.
func Header(k []byte) string {
	h := sha256.Sum256(k)
	d := httpsfv.NewDictionary()
	d.Add("v", httpsfv.NewItem(int64(1)))
	d.Add("kid", httpsfv.NewItem(h[:]))
	s, err := httpsfv.Marshal(d)
	if err != nil {
		// Both members are well-formed by construction.
		panic("clientvault: " + err.Error())
	}
	return s
}

// Bearer is K as the resolve endpoint takes it: base64url without
// padding, 43 characters.
func Bearer(k []byte) string { return base64.RawURLEncoding.EncodeToString(k) }

// KeyPath is the key file of the server origin and the reader profile
// under dir: dir/vault/<digest>.key.
func KeyPath(dir, origin, profile string) string {
	h := sha256.Sum256([]byte("phc client vault\x00" + strings.ToLower(origin) + "\x00" + profile))
	return filepath.Join(dir, "vault", hex.EncodeToString(h[:12])+".key")
}

// LoadKey returns K from the key file of origin and profile under dir,
// making it (256 random bits, mode 0600, in a 0700 directory) on first
// use. created says whether it was made now.
func LoadKey(dir, origin, profile string) (k []byte, created bool, err error) {
	path := KeyPath(dir, origin, profile)
	if raw, err := os.ReadFile(path); err == nil {
		k, err := base64.RawURLEncoding.Strict().DecodeString(strings.TrimSpace(string(raw)))
		if err != nil || len(k) != 32 {
			return nil, false, fmt.Errorf("the vault key file %s is damaged: remove it to make a new key (its binding must then be activated again)", path)
		}
		return k, false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, err
	}
	k = make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return LoadKey(dir, origin, profile) // made meanwhile by another hook
	}
	if err != nil {
		return nil, false, err
	}
	if _, err := f.WriteString(Bearer(k) + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return nil, false, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, false, err
	}
	return k, true, f.Close()
}

// maxSeen bounds the sightings a seen file keeps (the oldest go first).
const maxSeen = 10000

// Seen returns, for each of keys, when the vault first saw it for origin
// and profile: the time recorded in the profile's seen file (0600, beside
// the key file), or now for a key never seen, which it records. Never
// moving a sighting later is what lets the server answer expired for a
// key it minted again since.
func Seen(dir, origin, profile string, keys []string, now time.Time) (map[string]time.Time, error) {
	path := strings.TrimSuffix(KeyPath(dir, origin, profile), ".key") + ".seen"
	rec := map[string]time.Time{}
	if raw, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(raw, &rec); err != nil {
			rec = map[string]time.Time{} // damaged: every key is seen anew
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	out := make(map[string]time.Time, len(keys))
	changed := false
	for _, k := range keys {
		t, ok := rec[k]
		if !ok {
			t = now.UTC().Truncate(time.Second)
			rec[k] = t
			changed = true
		}
		out[k] = t
	}
	if !changed {
		return out, nil
	}
	if len(rec) > maxSeen {
		type kt struct {
			k string
			t time.Time
		}
		all := make([]kt, 0, len(rec))
		for k, t := range rec {
			all = append(all, kt{k, t})
		}
		sort.Slice(all, func(i, j int) bool { return all[i].t.After(all[j].t) })
		rec = map[string]time.Time{}
		for _, e := range all[:maxSeen] {
			rec[e.k] = e.t
		}
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// Written whole or not at all: a failed write leaves the sightings as
	// they were, and is an error (a sighting the file lost could later
	// move a key's first sighting later).
	if err := atomicfile.Write(path, raw); err != nil {
		return nil, err
	}
	return out, nil
}
