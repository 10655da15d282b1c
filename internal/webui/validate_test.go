package webui_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestConsoleValidate: the console's validate page checks a pasted or an
// uploaded document against the binding — each violation by path and
// keyword — shows a hostile document as text, and needs the form's CSRF
// token like every other form.
func TestConsoleValidate(t *testing.T) {
	c := startConsole(t)
	cl, ui := c.signedIn()
	status, page, _ := get(t, cl, ui+"/validate")
	if status != http.StatusOK || !strings.Contains(page, `id="validate-form"`) {
		t.Fatalf("GET /validate = %d\n%s", status, page)
	}
	csrf := csrfOf(t, page)

	tests := []struct {
		name, doc, as string
		want          []string
	}{
		{"valid persona", `{"id": "work", "name": "Work"}`, "", []string{"A valid persona."}},
		{"violations", `{"key": "A.B", "value": 1, "kind": "fact", "assertion": "made-up"}`, "",
			[]string{"Not a valid proposal", "/assertion", "enum", "/key", "pattern"}},
		{"named kind", `{"key": "a.b"}`, "held", []string{"Not a valid held", "/bundle_id", "required"}},
		{"not JSON", `{"key": `, "", []string{"Not a JSON document"}},
		{"hostile", `{"id": "<script>alert(1)</script>", "name": "x"}`, "", []string{"Not a valid persona", "&lt;script&gt;alert(1)&lt;/script&gt;"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, cl, ui+"/validate", url.Values{"csrf": {csrf}, "document": {tc.doc}, "as": {tc.as}}, nil)
			if status != http.StatusOK {
				t.Fatalf("POST /validate = %d\n%s", status, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %q:\n%s", w, body)
				}
			}
			if strings.Contains(body, "<script>alert") {
				t.Error("the page shows the document's markup as markup")
			}
		})
	}

	t.Run("upload", func(t *testing.T) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("csrf", csrf)
		fw, _ := mw.CreateFormFile("file", "manifest.json")
		io.WriteString(fw, `{"bundle_version": "0.9"}`)
		mw.Close()
		req, _ := http.NewRequest("POST", ui+"/validate", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), "Not a valid bundle_manifest") || !strings.Contains(string(raw), "/bundle_version") {
			t.Fatalf("upload = %d\n%s", resp.StatusCode, raw)
		}
	})

	t.Run("csrf", func(t *testing.T) {
		if status, body := post(t, cl, ui+"/validate", url.Values{"document": {`{}`}}, nil); status != http.StatusBadRequest || !strings.Contains(body, "CSRF") {
			t.Fatalf("POST without the CSRF token = %d\n%s", status, body)
		}
	})
}
