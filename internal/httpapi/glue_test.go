package httpapi

import "testing"

// TestGlueBodiesOverHTTP holds the quarantine and trust routes' bodies to
// their wire form, over a real socket, now that Service.Decode reads them:
// the single-record adopt takes an empty body, or one of white space
// only, as no body (a record not held is then a 404), while a body that is
// not JSON, or has an unknown member, is a 400 on every route.
func TestGlueBodiesOverHTTP(t *testing.T) {
	e := newExchangeEnv(t)
	const held = "/phc/v1/quarantine/qrn_AAAAAAAAAAAAAAAAAAAAAAAAAA"
	for _, body := range []string{"", " \r\n\t"} {
		if code, out := e.do("POST", held+"/adopt", e.owner, "application/json", []byte(body)); code != 404 {
			t.Errorf("adopt with body %q: %d %v, want 404 (no such held record)", body, code, out)
		}
	}
	for _, tc := range []struct{ path, body string }{
		{held + "/adopt", " x "},
		{held + "/adopt", `{"ids": [], "extra": 1}`},
		{"/phc/v1/quarantine/adopt", `{"all": true, "all": false}`},
		{held + "/unblock", `{"remove": ["x"], "extra": 1}`},
		{held + "/unblock", ``},
		{"/phc/v1/trust", `{"issuer": "https://issuer.example", "audience": "phc", "extra": 1}`},
		{"/phc/v1/trust", `{"issuer": `},
	} {
		if code, out := e.do("POST", tc.path, e.owner, "application/json", []byte(tc.body)); code != 400 {
			t.Errorf("POST %s %q: %d %v, want 400", tc.path, tc.body, code, out)
		}
	}
}
