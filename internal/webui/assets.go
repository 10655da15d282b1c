package webui

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/humanfmt"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// assets is the static files served under /ui/assets/.
func assets() fs.FS {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}

// funcs are the template helpers: formatting only.
var funcs = template.FuncMap{
	// unmapped is the foreign identity a held record's problem names, or
	// "" for any other problem.
	"unmapped": func(problem string) string {
		f, _ := strings.CutPrefix(problem, unmappedPrefix)
		if f == problem {
			return ""
		}
		return f
	},
	"json": func(raw json.RawMessage) string {
		if len(raw) == 0 {
			return ""
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return string(raw)
		}
		// The template escapes the text; JSON's own HTML escaping would
		// show \u003c where the value has <.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return string(raw)
		}
		return strings.TrimSuffix(buf.String(), "\n")
	},
	// when shows a time one way, with its zone (humanfmt.Time), in a
	// <time> element that carries the exact instant; nothing for none.
	"when": func(t any) template.HTML {
		var at time.Time
		switch v := t.(type) {
		case time.Time:
			at = v
		case *time.Time:
			if v != nil {
				at = *v
			}
		default:
			return template.HTML(template.HTMLEscapeString(fmt.Sprint(t)))
		}
		if at.IsZero() {
			return ""
		}
		return template.HTML(`<time datetime="` + at.UTC().Format(time.RFC3339) + `">` + template.HTMLEscapeString(humanfmt.Time(at)) + `</time>`)
	},
	"join": strings.Join,
	// refID is the record id of an "id@version" ref.
	"refID": func(ref string) string { id, _, _ := strings.Cut(ref, "@"); return id },
	"has": func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	},
	"duration": humanfmt.Seconds,
}

// parseTemplates parses each page with the shared layout.
func parseTemplates() map[string]*template.Template {
	pages, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, p := range pages {
		name := strings.TrimSuffix(strings.TrimPrefix(p, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", p))
		out[name] = t
	}
	return out
}
