package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/phc-project/phc/custodian"
	binding "github.com/phc-project/phc/schema"
)

// requestAnswer is request_context's answer (PCP §9): how the request
// stands, and the values it reaches that the app may read now — at once
// for what the person's policy shares without asking, once approved for
// the rest — with, while anything waits or cannot be read with this
// token, the next step that succeeds.
type requestAnswer struct {
	custodian.RequestView
	Fields   []custodian.Field `json:"fields"`
	Warnings []string          `json:"warnings,omitempty"`
	Next     string            `json:"next,omitempty"`
}

// requestArgs are request_context's arguments.
type requestArgs struct {
	Scope      json.RawMessage `json:"scope,omitempty"`
	Purpose    string          `json:"purpose"`
	Duration   json.RawMessage `json:"duration,omitempty"`
	Usage      string          `json:"usage,omitempty"`
	RequestID  string          `json:"request_id,omitempty"`
	Disclosure string          `json:"disclosure,omitempty"`
}

// requestContext is the request_context tool: a new request (scope and
// purpose), put to the person through the host's elicitation where the
// owner's settings and the host allow it, or the state of an earlier one
// (request_id alone); either way with the values the app may read now.
func (s *Server) requestContext(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
	var in requestArgs
	if err := args(req.Params.Arguments, &in); err != nil {
		return nil, err
	}
	if vs := in.violations(); len(vs) > 0 {
		return nil, violationsError("request_context", vs...)
	}
	svc := s.svc
	var v custodian.RequestView
	var err error
	asked := false
	if in.RequestID != "" {
		v, err = svc.PollRequest(ctx, custodian.ChannelMCP, p, in.RequestID)
	} else {
		doc := map[string]any{"scope": in.Scope, "purpose": in.Purpose, "usage": in.Usage}
		if in.Duration != nil {
			doc["duration"] = in.Duration
		}
		if in.Disclosure != "" {
			doc["disclosure"] = in.Disclosure
		}
		body, _ := json.Marshal(doc)
		// Over MCP the core mints no token: a bearer token never enters
		// the model's context. The grant is this consumer's either way;
		// the app reads it with its token, or fetches one limited to the
		// request over HTTP, outside the model's context.
		var rin custodian.RequestInput
		_ = svc.Decode("request.create", body, &rin) // answered by RequestContext
		v, err = svc.RequestContext(ctx, custodian.ChannelMCP, p, rin)
		switch {
		case err != nil || !elicits(req):
		case svc.MayAskInHost(custodian.ChannelMCP, v):
			asked = true
			v, err = s.askUser(ctx, p, req, v)
		case svc.MayTellInHost(custodian.ChannelMCP, v):
			asked = true
			v, err = s.tellUser(ctx, p, req, v)
		}
	}
	if err != nil {
		return nil, err
	}
	reader := p
	if in.Disclosure != "" {
		if reader, err = p.WithDisclosure(in.Disclosure); err != nil {
			return nil, err
		}
	}
	rd, err := svc.ReadScope(ctx, reader, v.Scope, v.Purpose)
	out := requestAnswer{RequestView: v, Fields: []custodian.Field{}}
	switch {
	case err == nil:
		out.Fields, out.Warnings = rd.Fields, rd.Warnings
		out.Revision = max(out.Revision, rd.Revision)
		out.Next = nextStep(v, rd, asked)
	case custodian.KindOf(err) == custodian.KindRateLimited:
		// The request stands: only its values wait.
		wait := (custodian.Describe(err).RetryAfter + time.Second - 1) / time.Second
		out.Next = fmt.Sprintf("The request is filed, but this token has read as often as it may for now: call request_context "+
			"with {\"request_id\": %q} alone in %d seconds for its values.", v.ID, int64(wait))
	default:
		return nil, err
	}
	return out, nil
}

// elicits reports whether the host of req's session supports elicitation.
func elicits(req *mcp.CallToolRequest) bool {
	ss := req.Session
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// nextStep is what the app does next about request v, whose scope it read
// as rd says, asked telling whether the person was asked in its host. It
// depends on the request, the token and the owner's settings alone, never
// on which fields exist: a hidden field changes nothing in it.
func nextStep(v custodian.RequestView, rd custodian.ScopeRead, asked bool) string {
	poll := fmt.Sprintf("call request_context with {\"request_id\": %q} alone", v.ID)
	var b strings.Builder
	switch v.Status {
	case custodian.RequestPending:
		switch {
		case v.Tier == custodian.SensitivityCritical:
			fmt.Fprintf(&b, "Waiting for the person: critical data needs their approval in phc itself, with their password "+
				"(phc approve %s, or Requests in the console); no app can approve it. Tell them so; then %s: once approved, "+
				"its answer carries the values.", v.ID, poll)
		case asked:
			fmt.Fprintf(&b, "Still waiting: the person did not approve it here. They can approve it in phc (phc approve %s, or "+
				"Requests in the console); then %s: once approved, its answer carries the values.", v.ID, poll)
		default:
			fmt.Fprintf(&b, "Waiting for the person's approval in phc (phc approve %s, or Requests in the console). Tell them so; "+
				"then %s: once approved, its answer carries the values.", v.ID, poll)
		}
		b.WriteString(" The fields here are those you may read already.")
	case custodian.RequestDenied:
		b.WriteString("The person refused this request. Do not ask again for it unless they say so; the fields here are those you may read anyway.")
	}
	if v.Status == custodian.RequestDenied {
		return b.String()
	}
	// What no approval changes: this token cannot read it.
	fetch := fmt.Sprintf("the app fetches a token limited to this request with GET /context/requests/%s over HTTP (once, after the approval), outside the model's context", v.ID)
	var cannot string
	switch {
	case rd.NotRead == custodian.NotReadMode:
		cannot = "this token does not read (its mode is write): " + fetch + "."
	case rd.NotRead == custodian.NotReadPurpose:
		cannot = fmt.Sprintf("this token reads only for the purpose %s, not %s: %s.", strconv.Quote(rd.TokenPurpose), strconv.Quote(v.Purpose), fetch)
	case len(rd.Unreached) > 0:
		cannot = fmt.Sprintf("this token's scope does not reach %s: what lies beyond it is read with another token; %s.",
			strings.Join(rd.Unreached, ", "), fetch)
	}
	if cannot == "" {
		return b.String() // approved: the fields say it all
	}
	if b.Len() > 0 {
		b.WriteString(" Even approved, ")
	} else {
		b.WriteString("Approved, but ")
	}
	b.WriteString(cannot)
	return b.String()
}

// scopeArray is the schema of request_context's scope given as an array:
// the binding's key patterns, 1 to 64 of them.
var scopeArray = func() *binding.Schema {
	sch, err := binding.Compile("mcp-request-scope", []byte(`{"type": "array", "minItems": 1, "maxItems": 64, "items": `+fromDef("keyPattern", "")+`}`))
	if err != nil {
		panic("mcpserver: " + err.Error())
	}
	return sch
}()

// keyPatternOne is the schema of one key pattern.
var keyPatternOne = func() *binding.Schema {
	sch, err := binding.Compile("mcp-key-pattern", []byte(fromDef("keyPattern", "")))
	if err != nil {
		panic("mcpserver: " + err.Error())
	}
	return sch
}()

// violations are what request_context's schema cannot say: its two forms
// (request_id alone, or a scope and a purpose), a scope that is a string
// of comma-separated key patterns or an array of them, and a duration
// given as seconds or as text.
func (in requestArgs) violations() []schemaViolation {
	var vs []schemaViolation
	if in.RequestID != "" {
		for name, set := range map[string]bool{"scope": in.Scope != nil, "purpose": in.Purpose != "", "duration": in.Duration != nil, "usage": in.Usage != "", "disclosure": in.Disclosure != ""} {
			if set {
				vs = append(vs, schemaViolation{"/" + name, "not", "is not allowed with request_id"})
			}
		}
		return vs
	}
	if in.Scope == nil {
		vs = append(vs, schemaViolation{"/scope", "required", "is required (or request_id alone)"})
	} else {
		vs = append(vs, scopeViolations(in.Scope)...)
	}
	if in.Purpose == "" {
		vs = append(vs, schemaViolation{"/purpose", "required", "is required (or request_id alone)"})
	}
	if in.Duration != nil {
		vs = append(vs, durationViolations(in.Duration)...)
	}
	return vs
}

const scopeType = "must be a string of comma-separated key patterns or an array of them"

// scopeViolations checks request_context's scope.
func scopeViolations(raw json.RawMessage) []schemaViolation {
	doc, err := binding.Decode(raw, binding.DefaultLimits())
	if err != nil {
		return []schemaViolation{{"/scope", "type", scopeType}}
	}
	switch v := doc.(type) {
	case string:
		var n int
		for i, pat := range strings.Split(v, ",") {
			pat = strings.TrimSpace(pat)
			if pat == "" {
				continue
			}
			n++
			if keyPatternOne.Validate(pat) != nil {
				return []schemaViolation{{"/scope", "pattern", fmt.Sprintf("pattern %d is not a key pattern (a key, a key followed by .*, or *)", i+1)}}
			}
		}
		switch {
		case n == 0:
			return []schemaViolation{{"/scope", "minLength", "names no key pattern"}}
		case n > 64:
			return []schemaViolation{{"/scope", "maxItems", "names more than 64 key patterns"}}
		}
		return nil
	case []any:
		var out []schemaViolation
		for _, x := range scopeArray.Validate(v) {
			out = append(out, schemaViolation{"/scope" + x.Path, x.Keyword, x.Message})
		}
		return out
	}
	return []schemaViolation{{"/scope", "type", scopeType}}
}

// durationViolations checks request_context's duration: whole seconds, or
// text such as 1h or 30 minutes, from a minute to 30 days, as the core
// reads it.
func durationViolations(raw json.RawMessage) []schemaViolation {
	ok, short, long := custodian.RequestDurationBounds(raw)
	switch {
	case !ok:
		keyword := "type"
		if len(raw) > 0 && raw[0] == '"' {
			keyword = "format"
		}
		return []schemaViolation{{"/duration", keyword, "must be whole seconds or text such as 1h or 30 minutes"}}
	case short:
		return []schemaViolation{{"/duration", "minimum", "must be at least one minute"}}
	case long:
		return []schemaViolation{{"/duration", "maximum", "must be at most 30 days"}}
	}
	return nil
}

// queryViolations checks context_search's query as the core reads it:
// printable text, not only spaces, of at most 256 bytes.
func queryViolations(q string) []schemaViolation {
	switch {
	case strings.TrimSpace(q) == "":
		return []schemaViolation{{"/query", "minLength", "holds no word"}}
	case len(q) > 256:
		return []schemaViolation{{"/query", "maxLength", "must be at most 256 bytes"}}
	case !utf8.ValidString(q) || strings.ContainsFunc(q, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }):
		return []schemaViolation{{"/query", "pattern", "must be printable text, without control characters"}}
	}
	return nil
}

// fieldIDViolations checks what the key grammar of a field id leaves out:
// a field is category.field_name (PCP §2), at least two segments.
func fieldIDViolations(id string) []schemaViolation {
	if !strings.Contains(id, ".") {
		return []schemaViolation{{"/id", "pattern", "must be category.field_name: at least two dot-separated segments"}}
	}
	return nil
}

// setViolations checks what context_set's schema leaves to the core: an id
// of at least two segments and a value that is not null.
func setViolations(id string, raw json.RawMessage) []schemaViolation {
	vs := fieldIDViolations(id)
	var in struct {
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(raw, &in) == nil && string(in.Value) == "null" {
		vs = append(vs, schemaViolation{"/value", "type", "must not be null"})
	}
	return vs
}
