package webui

import (
	"io"
	"net/http"
	"slices"

	"github.com/phc-project/phc/schema"
)

// validation is what the validate page shows of a document.
type validation struct {
	Kind       string
	Violations []schema.Violation
	Error      string
}

// validatePage shows the form of the validate page.
func (s *Server) validatePage(w http.ResponseWriter, r *http.Request, sess *session) error {
	s.render(w, http.StatusOK, "validate", sess, map[string]any{"Names": schema.Names})
	return nil
}

// validate checks a pasted or uploaded document against the binding and
// shows the result: nothing of it is stored, logged or receipted.
func (s *Server) validate(w http.ResponseWriter, r *http.Request, sess *session) error {
	doc := r.PostForm.Get("document")
	if f, _, err := r.FormFile("file"); err == nil {
		raw, err := io.ReadAll(io.LimitReader(f, maxForm))
		f.Close()
		if err != nil {
			return invalid("the file could not be read")
		}
		if len(raw) > 0 {
			doc = string(raw)
		}
	}
	as := r.PostForm.Get("as")
	if as != "" && !slices.Contains(schema.Names, as) {
		return invalid("unknown kind of document")
	}
	res := &validation{}
	switch v, err := s.validator(); {
	case err != nil:
		return err
	case doc == "":
		res.Error = "Paste a document, or choose a file."
	default:
		res.Kind, res.Violations, res.Error = check(v, []byte(doc), as)
	}
	s.render(w, http.StatusOK, "validate", sess, map[string]any{"Names": schema.Names, "Document": doc, "As": as, "Result": res})
	return nil
}

// check validates raw as the document as names (told from its members
// when as is ""); it returns the kind, the violations, or why it could not
// check it.
func check(v *schema.Validator, raw []byte, as string) (string, []schema.Violation, string) {
	doc, err := schema.Decode(raw, schema.DefaultLimits())
	if err != nil {
		return "", nil, "Not a JSON document the binding accepts: " + err.Error()
	}
	if as == "" {
		if as = schema.Kind(doc); as == "" {
			return "", nil, "Which document is this? Choose its kind."
		}
	}
	return as, v.Validate(as, doc), ""
}

// validator is the binding's validator, compiled once.
func (s *Server) validator() (*schema.Validator, error) {
	s.validOnce.Do(func() { s.valid, s.validErr = schema.New() })
	return s.valid, s.validErr
}
