package oidctoken

import (
	"context"
	"errors"
	"testing"
)

// The whole verification (discovery, JWKS, every refused token) is tested
// with an issuer served over HTTP in internal/cli/oidc_test.go.

func TestCheckIssuerURL(t *testing.T) {
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"https://accounts.example.com", true},
		{"https://accounts.example.com/tenant/v2.0", true},
		{"http://127.0.0.1:8080", true},
		{"http://localhost:9000/realms/x", true},
		{"http://[::1]:8080", true},
		{"http://accounts.example.com", false},
		{"https://user:pw@accounts.example.com", false},
		{"https://accounts.example.com/?x=1", false},
		{"https://accounts.example.com/#f", false},
		{"https://accounts.example.com#", false},
		{"https://accounts.example.com?", false},
		{"ftp://accounts.example.com", false},
		{"accounts.example.com", false},
		{"", false},
	} {
		if err := CheckIssuerURL(c.url); (err == nil) != c.ok {
			t.Errorf("CheckIssuerURL(%q) = %v; want ok=%v", c.url, err, c.ok)
		}
	}
}

func TestVerifyRefusesAnUntrustableIssuerWithoutFetching(t *testing.T) {
	v := New(nil, nil)
	if _, err := v.Verify(context.Background(), "http://accounts.example.com", "aud", "x.y.z"); !errors.Is(err, ErrUntrustedURL) {
		t.Fatalf("Verify over plain http to a remote host = %v; want ErrUntrustedURL", err)
	}
}
