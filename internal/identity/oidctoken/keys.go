package oidctoken

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// KeyRefetchInterval is the shortest time between two fetches of one
// issuer's keys, and between two attempts at its discovery after one
// failed. A token signed with a key the issuer rotated to less than this
// long after the last fetch is refused; the first one after it is not.
const KeyRefetchInterval = 30 * time.Second

// maxKeySet bounds the size of an issuer's key set.
const maxKeySet = 1 << 20

// keyFetcher is the transport of the client of one issuer's key set, an
// oidc.RemoteKeySet. That key set fetches the keys again for every token
// signed with a key it does not hold, however many such tokens come, and
// anyone can make them. keyFetcher goes to the network at most once per
// KeyRefetchInterval and in between answers with what it got last: the
// same keys, against which such a token fails as badly signed (or, when
// the last fetch failed, the same failure).
type keyFetcher struct {
	client *http.Client // the verifier's, which fetches
	now    func() time.Time

	mu     sync.Mutex // held across a fetch: one at a time
	at     time.Time  // of the last fetch; zero before the first
	header http.Header
	body   []byte
	err    error
}

func (f *keyFetcher) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := f.now(); f.at.IsZero() || now.Sub(f.at) >= KeyRefetchInterval || now.Before(f.at) {
		f.at = now
		f.header, f.body, f.err = f.fetch(req)
	}
	if f.err != nil {
		return nil, f.err
	}
	return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: f.header.Clone(), Body: io.NopCloser(bytes.NewReader(f.body)), ContentLength: int64(len(f.body)), Request: req}, nil
}

// fetch gets the key set: the header and body of a successful answer of
// at most maxKeySet bytes.
func (f *keyFetcher) fetch(req *http.Request) (http.Header, []byte, error) {
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySet+1))
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("oidctoken: keys: %w", err)
	case resp.StatusCode != http.StatusOK:
		return nil, nil, fmt.Errorf("oidctoken: keys: %s answered %s", req.URL.Redacted(), resp.Status)
	case len(body) > maxKeySet:
		return nil, nil, fmt.Errorf("oidctoken: keys: %s answered more than %d bytes", req.URL.Redacted(), maxKeySet)
	}
	return resp.Header, body, nil
}
