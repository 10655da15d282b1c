package httpapi

import "testing"

// TestBodyRefusedAfterTheCaller: the core checks the caller before the
// body, over HTTP as in the core. A token that may not write, sending a
// malformed proposal, is answered 403 mode_denied (as the core answered
// when it took raw bodies), not 400; a writing token gets the 400.
func TestBodyRefusedAfterTheCaller(t *testing.T) {
	e := newExchangeEnv(t)
	if status, body := e.do("POST", "/phc/v1/consumers", e.owner, "application/json",
		[]byte(`{"name": "app", "secret": "a-secret-of-app-0123456789"}`)); status != 201 {
		t.Fatalf("adding the consumer = %d %v", status, body)
	}
	token := func(mode string) string {
		status, body := e.do("POST", "/context/tokens/service", "", "application/json",
			[]byte(`{"consumer": "app", "secret": "a-secret-of-app-0123456789", "scope": "*", "mode": "`+mode+`"}`))
		tok, _ := body["token"].(string)
		if status != 201 && status != 200 || tok == "" {
			t.Fatalf("minting a %s token = %d %v", mode, status, body)
		}
		return tok
	}
	malformed := []byte(`{"key": "a.b", "value": `)
	if status, body := e.do("POST", "/phc/v1/proposals", token("read"), "application/json", malformed); status != 403 || body["constraint"] != "mode_denied" {
		t.Errorf("malformed proposal with a read token = %d %v; want 403 mode_denied", status, body)
	}
	if status, body := e.do("POST", "/phc/v1/proposals", token("write"), "application/json", malformed); status != 400 || body["constraint"] != "invalid_request" {
		t.Errorf("malformed proposal with a write token = %d %v; want 400 invalid_request", status, body)
	}
}
