package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/phc-project/phc/custodian"
	binding "github.com/phc-project/phc/schema"
)

// anyJSON is the explicit schema of a value that may be any JSON: an
// object without a type. The Go SDK would infer the boolean schema true,
// which the TypeScript SDK's client refuses (it then rejects the whole
// tools/list), and a type array is refused by hosts whose dialect allows a
// single type.
const anyJSON = `{"description": "any JSON value"}`

// The grammars the tools share are the binding's own (schema.Def), never a
// copy of them.
var (
	purposeSchema = fromDef("purpose", "why the context is needed; grants are per purpose")
	// readPurposeSchema is the purpose of a read: the purpose of the grant
	// it reads under.
	readPurposeSchema = fromDef("purpose", "the purpose of the grant you read under (grants are per purpose). "+
		"A token minted for a purpose reads under it: leave this out, or repeat it. A token minted without one: pass it")
	fieldIDSchema = fromDef("key", "a field id in dot notation, e.g. identity.full_name")
	tierSchema    = fromDef("sensitivity", "")
	kindSchema    = fromDef("kind", "")
	assertSchema  = fromDef("assertion", "")
	subjectSchema = fromDef("subject", "")
)

// fromDef is the binding's definition name as a schema literal, with
// description desc ("": as the binding has it).
func fromDef(name, desc string) string {
	raw, err := binding.Def(name)
	if err != nil {
		panic("mcpserver: " + err.Error())
	}
	if desc == "" {
		return string(raw)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		panic("mcpserver: definition " + name + ": " + err.Error())
	}
	m["description"] = desc
	out, err := json.Marshal(m)
	if err != nil {
		panic("mcpserver: definition " + name + ": " + err.Error())
	}
	return string(out)
}

var fieldSchema = `{"type": "object", "properties": {
	"id": {"type": "string"}, "category": {"type": "string"}, "field_name": {"type": "string"},
	"value": ` + anyJSON + `, "sensitivity": ` + tierSchema + `, "updated_at": {"type": "string"},
	"version": {"type": "integer"}, "written_by": {"type": "string"}, "claim_id": {"type": "string"}}}`

const errorProps = `"error": {"type": "string"}, "constraint": {"type": "string"}`

func schema(s string) json.RawMessage {
	if !json.Valid([]byte(s)) {
		panic("mcpserver: invalid schema literal: " + s)
	}
	return json.RawMessage(s)
}

func boolPtr(b bool) *bool { return &b }

// unboundNote ends the description of every tool that reads: what a token
// minted without a purpose (unbound) sees, and what to do next.
const unboundNote = " Purpose: a token minted for a purpose reads under it (leave purpose out, or repeat it; another purpose is scope_exceeded). " +
	"A token minted without a purpose should pass purpose, the purpose of the grant it reads under. Without it, it reads under the " +
	"purpose of your grants that serve the read when they share one, and else sees only what the person shares with every app; where " +
	"grants of several purposes could serve it, it gets purpose_required, which lists your grants' purposes: call again with one of them. " +
	"A field you may not read looks exactly like one that does not exist."

// tool is one tool: its definition and the core call behind it.
type tool struct {
	def *mcp.Tool
	fn  func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error)
}

func (s *Server) tools() []tool {
	svc := s.svc
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)}
	return []tool{
		{&mcp.Tool{
			Name:  "memory_propose",
			Title: "Propose a memory",
			Description: "Propose a memory about the person (a claim: key, value, kind, assertion, evidence). " +
				"It waits in the person's review queue and is used only once they confirm it; this tool never confirms.",
			InputSchema: schema(`{"type": "object", "required": ["key", "value", "kind", "assertion"], "additionalProperties": false,
				"properties": {
					"key": ` + fieldIDSchema + `,
					"value": ` + anyJSON + `,
					"kind": ` + kindSchema + `,
					"assertion": ` + assertSchema + `,
					"subject": ` + subjectSchema + `,
					"evidence": {"type": "array", "maxItems": 32, "items": {"type": "object", "required": ["ref"], "additionalProperties": false,
						"properties": {"ref": {"type": "string", "minLength": 1, "maxLength": 2048}, "digest": {"type": "string"}}}},
					"reported": {"type": "object", "additionalProperties": {"type": "string"}, "description": "what the app says about itself: app, run_id, model"},
					"valid_from": {"type": "string", "format": "date-time"},
					"valid_to": {"type": "string", "format": "date-time"},
					"sensitivity": ` + tierSchema + `,
					"restrictions": {"type": "array", "items": {"type": "object", "required": ["type", "mandatory"],
						"properties": {"type": {"type": "string"}, "mandatory": {"type": "boolean"}, "holder": {"type": "string"}, "params": {"type": "object"}}}},
					"personas_hint": {"type": "array", "maxItems": 16, "items": {"type": "string"}},
					"note": {"type": "string", "maxLength": 4096}}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"proposal_id": {"type": "string"}, "status": {"type": "string"}, "revision": {"type": "integer"}, ` + errorProps + `}}`),
			Annotations:  &mcp.ToolAnnotations{Title: "Propose a memory", DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			// A refusal stays in the input: Propose answers it after its
			// own checks of the caller.
			var in custodian.ProposalInput
			_ = svc.Decode("propose", req.Params.Arguments, &in)
			return svc.Propose(ctx, p, in)
		}},

		{&mcp.Tool{
			Name:         "context_status",
			Title:        "Custodian status",
			Description:  "Whether the person's context vault is locked.",
			InputSchema:  schema(`{"type": "object", "additionalProperties": false, "properties": {}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"initialized": {"type": "boolean"}, "locked": {"type": "boolean"}, "field_count": {"type": "integer"}, "categories": {"type": "object", "additionalProperties": {"type": "integer"}}, "revision": {"type": "integer"}, ` + errorProps + `}}`),
			Annotations:  readOnly,
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			var in struct{}
			if err := args(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return svc.Status(ctx, p), nil
		}},

		{&mcp.Tool{
			Name:         "context_list",
			Title:        "List context fields",
			Description:  "The fields you may read, without their values." + unboundNote,
			InputSchema:  schema(`{"type": "object", "additionalProperties": false, "properties": {"purpose": ` + readPurposeSchema + `}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"context_version": {"type": "string"}, "fields": {"type": "array", "items": ` + fieldSchema + `}, "revision": {"type": "integer"}, ` + errorProps + `}}`),
			Annotations:  readOnly,
		}, purposeOnly(svc.ListFields)},

		{&mcp.Tool{
			Name:         "context_get",
			Title:        "Read one field",
			Description:  "One field with its value, if you may read it for the purpose." + unboundNote,
			InputSchema:  schema(`{"type": "object", "required": ["id"], "additionalProperties": false, "properties": {"id": ` + fieldIDSchema + `, "purpose": ` + readPurposeSchema + `, "disclosure": ` + disclosureSchema + `}}`),
			OutputSchema: schema(fieldSchemaWith(`"revision": {"type": "integer"}, "warnings": {"type": "array", "items": {"type": "string"}}, ` + errorProps)),
			Annotations:  readOnly,
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			var in struct {
				ID         string `json:"id"`
				Purpose    string `json:"purpose"`
				Disclosure string `json:"disclosure"`
			}
			p, err := valueArgs(req, p, &in, &in.Disclosure)
			if err != nil {
				return nil, err
			}
			if vs := fieldIDViolations(in.ID); len(vs) > 0 {
				return nil, violationsError("context_get", vs...)
			}
			return svc.GetField(ctx, p, in.ID, in.Purpose)
		}},

		{&mcp.Tool{
			Name:        "context_context",
			Title:       "Read context by category",
			Description: "Every field you may read for the purpose, with values, grouped by category." + unboundNote,
			InputSchema: schema(`{"type": "object", "additionalProperties": false, "properties": {"purpose": ` + readPurposeSchema + `, "disclosure": ` + disclosureSchema + `}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"context_version": {"type": "string"},
				"categories": {"type": "object", "additionalProperties": {"type": "array", "items": ` + fieldSchema + `}},
				"revision": {"type": "integer"}, "warnings": {"type": "array", "items": {"type": "string"}}, ` + errorProps + `}}`),
			Annotations: readOnly,
		}, purposeOnly(svc.FieldContext)},

		{&mcp.Tool{
			Name:  "context_set",
			Title: "Write one field",
			Description: "Write a field under PCP rules: where the person's policy auto-approves it (public or standard data, " +
				"nothing replaced that this app did not write) it is committed (status committed, with the field); anything " +
				"else waits for the person's review (status pending, with a proposal_id). A field you may not read answers " +
				"exactly like one that does not exist: a write there that answers committed waits for the person's review.",
			InputSchema: schema(`{"type": "object", "required": ["id", "value"], "additionalProperties": false,
				"properties": {"id": ` + fieldIDSchema + `, "value": ` + anyJSON + `, "sensitivity": ` + tierSchema + `}}`),
			OutputSchema: schema(fieldSchemaWith(`"revision": {"type": "integer"},
				"warnings": {"type": "array", "description": "a key that looks like another name for a well-known one: the write is done as asked, and suggest names that key",
					"items": {"type": "object", "properties": {"suggest": {"type": "string"}, "reason": {"type": "string"}}}},
				"proposal_id": {"type": "string"}, "status": {"type": "string"}, ` + errorProps)),
			Annotations: &mcp.ToolAnnotations{Title: "Write one field", DestructiveHint: boolPtr(true), IdempotentHint: true, OpenWorldHint: boolPtr(false)},
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			// The id comes out of the arguments; the rest goes to the core as
			// it came, member for member, as PUT /context/fields/{id}'s body.
			idRaw, body, err := splitMember(req.Params.Arguments, "id")
			var id string
			if err == nil {
				err = json.Unmarshal(idRaw, &id)
			}
			if err != nil {
				return nil, &custodian.Error{Op: "context_set", Kind: custodian.KindInvalid, Public: "the arguments do not match the tool's input schema", Err: err}
			}
			if vs := setViolations(id, req.Params.Arguments); len(vs) > 0 {
				return nil, violationsError("context_set", vs...)
			}
			var in custodian.FieldInput
			_ = svc.Decode("field.put", body, &in) // answered by PutField
			f, pending, err := svc.PutField(ctx, p, id, in)
			if err != nil {
				return nil, err
			}
			// As PUT /context/fields/{id} answers: the hints of the key written.
			hints := custodian.FieldHints(id)
			if pending != nil {
				return struct {
					*custodian.Proposed
					Warnings []custodian.Hint `json:"warnings,omitempty"`
				}{pending, hints}, nil
			}
			return struct {
				custodian.FieldWritten
				Warnings []custodian.Hint `json:"warnings,omitempty"`
			}{f, hints}, nil
		}},

		{&mcp.Tool{
			Name:  "request_context",
			Title: "Ask for more context",
			Description: "Ask the person for a scope of their context (key patterns such as health.* or identity.full_name) for a purpose, " +
				"and get at once, in fields, the values of that scope you may read: what the person's policy shares without asking " +
				"(public data; standard data too where they chose so) and what they already granted you for the purpose. " +
				"Sensitive data is put to the person in this app when it can ask them (elicitation) and they allow approvals that way; " +
				"approved, its values come in the same answer. Critical data is put to them too, to tell them that they approve it " +
				"only in phc, with their password, and to let them refuse it. Otherwise, and always for critical data unless refused, " +
				"the request waits for their approval in phc (status pending, with a request_id and next, the step to take): call again with only request_id " +
				"to see how it stands; once approved, that answer carries the values. A field you may not read is left out exactly " +
				"as one that does not exist.",
			InputSchema: schema(`{"type": "object", "additionalProperties": false, "properties": {
				"scope": {"description": "key patterns: a string, comma separated (identity.*, health.allergies), or an array of strings ([\"identity.full_name\", \"addresses.current\"]); a field covers the keys below it. Either form; the server checks it."},
				"purpose": ` + purposeSchema + `,
				"duration": {"description": "how long: 3600 (seconds), 1h or 30 minutes"},
				"usage": {"type": "string", "enum": ["single", "multi", "single-use", "multi-use"]},
				"disclosure": {"type": "string", "enum": ["reference"], "description": "reference: receive ⟦TYPE_N:display⟧ references in place of the values this request grants (the person's local vault hook resolves them on their machine)"},
				"request_id": {"type": "string", "pattern": "^req_[A-Z2-7]{26}$", "description": "ask how an earlier request stands (alone, without scope and purpose)"}}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"request_id": {"type": "string"}, "status": {"type": "string"},
				"scope": {"type": "array", "items": {"type": "string"}}, "purpose": {"type": "string"}, "tier": {"type": "string"}, "expires_at": {"type": "string"},
				"fields": {"type": "array", "description": "the values of the scope you may read now", "items": ` + fieldSchema + `},
				"next": {"type": "string", "description": "what to do next, while anything waits or this token cannot read it"},
				"revision": {"type": "integer"}, "warnings": {"type": "array", "items": {"type": "string"}}, ` + errorProps + `}}`),
			Annotations: &mcp.ToolAnnotations{Title: "Ask for more context", DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
		}, s.requestContext},

		{&mcp.Tool{
			Name:  "context_search",
			Title: "Search context",
			Description: "Find the fields you may read for the purpose whose key or value matches the query " +
				"(a key prefix such as addresses.current, a word such as city or a word of a value), best first, with their values. " +
				"It reads what context_get would, and nothing else." + unboundNote,
			InputSchema: schema(`{"type": "object", "required": ["query"], "additionalProperties": false, "properties": {
				"query": {"type": "string", "minLength": 1, "maxLength": 256, "description": "words or a key prefix"},
				"purpose": ` + readPurposeSchema + `,
				"limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "results at most (default 10)"},
				"disclosure": ` + disclosureSchema + `}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"query": {"type": "string"}, "fields": {"type": "array", "items": ` + fieldSchema + `},
				"revision": {"type": "integer"}, "warnings": {"type": "array", "items": {"type": "string"}}, ` + errorProps + `}}`),
			Annotations: readOnly,
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			var in struct {
				Query      string `json:"query"`
				Purpose    string `json:"purpose"`
				Limit      int    `json:"limit"`
				Disclosure string `json:"disclosure"`
			}
			p, err := valueArgs(req, p, &in, &in.Disclosure)
			if err != nil {
				return nil, err
			}
			if vs := queryViolations(in.Query); len(vs) > 0 {
				return nil, violationsError("context_search", vs...)
			}
			return svc.SearchFields(ctx, p, in.Query, in.Purpose, in.Limit)
		}},

		{&mcp.Tool{
			Name:  "memory_status",
			Title: "How your proposals stand",
			Description: "Whether your proposals (memory_propose, or a context_set that waits for review) are still proposed, " +
				"or were confirmed, rejected or withdrawn: one, by proposal_id, or your newest 100. Never what the person changed.",
			InputSchema: schema(`{"type": "object", "additionalProperties": false, "properties": {
				"proposal_id": {"type": "string", "pattern": "^prp_[A-Z2-7]{26}$"}}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"proposals": {"type": "array", "items": ` + proposalStatusSchema + `},
				"revision": {"type": "integer"}, ` + errorProps + `}}`),
			Annotations: readOnly,
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			var in struct {
				ID string `json:"proposal_id"`
			}
			if err := args(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return svc.OwnProposals(ctx, p, in.ID)
		}},

		{&mcp.Tool{
			Name:         "memory_withdraw",
			Title:        "Withdraw a proposal",
			Description:  "Withdraw one of your proposals while it still waits for the person's review.",
			InputSchema:  schema(`{"type": "object", "required": ["proposal_id"], "additionalProperties": false, "properties": {"proposal_id": {"type": "string", "pattern": "^prp_[A-Z2-7]{26}$"}}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"proposal_id": {"type": "string"}, "status": {"type": "string"}, "proposed_at": {"type": "string"}, "decided_at": {"type": "string"}, ` + errorProps + `}}`),
			Annotations:  &mcp.ToolAnnotations{Title: "Withdraw a proposal", DestructiveHint: boolPtr(true), IdempotentHint: false, OpenWorldHint: boolPtr(false)},
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			var in struct {
				ID string `json:"proposal_id"`
			}
			if err := args(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return svc.WithdrawProposal(ctx, p, in.ID)
		}},
	}
}

const proposalStatusSchema = `{"type": "object", "properties": {"proposal_id": {"type": "string"},
	"status": {"type": "string", "enum": ["proposed", "confirmed", "rejected", "withdrawn"]}, "key": {"type": "string"},
	"proposed_at": {"type": "string"}, "decided_at": {"type": "string"}}}`

// valueArgs decodes the arguments of a tool that returns values into in,
// and applies to p the disclosure they ask for (*disclosure, in's field).
func valueArgs(req *mcp.CallToolRequest, p custodian.Principal, in any, disclosure *string) (custodian.Principal, error) {
	if err := args(req.Params.Arguments, in); err != nil {
		return p, err
	}
	return p.WithDisclosure(*disclosure)
}

// purposeOnly adapts a core read whose only argument is a purpose.
func purposeOnly[T any](read func(context.Context, custodian.Principal, string) (T, error)) func(context.Context, custodian.Principal, *mcp.CallToolRequest) (any, error) {
	return func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
		var in struct {
			Purpose    string `json:"purpose"`
			Disclosure string `json:"disclosure"`
		}
		p, err := valueArgs(req, p, &in, &in.Disclosure)
		if err != nil {
			return nil, err
		}
		return read(ctx, p, in.Purpose)
	}
}

// disclosureSchema is the optional disclosure argument of the tools that
// return values (docs/formats/reference.md).
const disclosureSchema = `{"type": "string", "enum": ["value", "reference"], "description": "reference: get ⟦TYPE_N:display⟧ references in place of values (the person's local vault hook puts the values into local files); value: values where the person allows them. Critical data comes as references unless the person chose otherwise."}`

// fieldSchemaWith is the field schema with more properties.
func fieldSchemaWith(more string) string {
	return fieldSchema[:len(fieldSchema)-2] + `, ` + more + `}}`
}

func (s *Server) addTools() {
	for _, t := range s.tools() {
		var in *binding.Schema
		// memory_propose's schema is the binding's proposal, which the core
		// checks itself (schema_violation, as over HTTP).
		if t.def.Name != "memory_propose" {
			var err error
			in, err = binding.Compile("mcp-"+t.def.Name, t.def.InputSchema.(json.RawMessage))
			if err != nil {
				panic("mcpserver: " + t.def.Name + ": " + err.Error())
			}
		}
		s.mcp.AddTool(t.def, s.handler(t.def.Name, in, t.fn))
	}
}

// schemaViolation is one violation a handler finds of what the schema
// cannot say at its top level (alternatives between members).
type schemaViolation struct{ path, keyword, message string }

// violationsError is KindInvalid, as HTTP answers a malformed request, with
// vs naming each path and keyword, for tool's arguments.
func violationsError(tool string, vs ...schemaViolation) error {
	out := make([]binding.Violation, 0, len(vs))
	for _, v := range vs {
		out = append(out, binding.Violation{Path: v.path, Keyword: v.keyword, Message: v.message})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return &custodian.Error{Op: tool, Kind: custodian.KindInvalid, Public: argsMismatch, Subject: "arguments", Violations: out}
}

const argsMismatch = "the arguments do not match the tool's input schema"

// checkArgs checks a tool's arguments within the bounds of every request
// body (too large is KindTooLarge) and against its input schema in (nil:
// the core checks them), where a failure is KindInvalid — what HTTP
// answers a malformed request — with each violation's path and keyword:
// tool errors all, so that the host's session goes on.
func checkArgs(tool string, in *binding.Schema, raw json.RawMessage) error {
	if len(raw) == 0 {
		raw = json.RawMessage(`{}`)
	}
	doc, err := binding.Decode(raw, binding.DefaultLimits())
	switch {
	case errors.Is(err, binding.ErrTooLarge):
		return &custodian.Error{Op: tool, Kind: custodian.KindTooLarge, Public: "the arguments are larger than a request may be (1 MiB, strings of 64 KiB)", Err: err}
	case err != nil:
		return &custodian.Error{Op: tool, Kind: custodian.KindInvalid, Public: "the arguments are not valid JSON", Err: err}
	}
	if in == nil {
		return nil
	}
	if vs := in.Validate(doc); vs != nil {
		return &custodian.Error{Op: tool, Kind: custodian.KindInvalid, Public: argsMismatch, Subject: "arguments", Violations: vs}
	}
	return nil
}

// askUser asks the person, through the host's elicitation, to decide a
// pending request the core lets the host put to them (MayAskInHost), when
// the host supports it. The consumer and purpose are shown literally
// (quoted, control characters escaped). The answer is relayed to the core,
// which never lets it approve critical data. A host without elicitation,
// or a person who cancels, leaves the request pending; so does an answer
// the core does not take (the owner decided first, say): the request is
// filed either way, and the answer is how it stands now.
func (s *Server) askUser(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest, v custodian.RequestView) (custodian.RequestView, error) {
	msg := fmt.Sprintf("The app %s asks to read your %s data for the purpose %s, until you revoke it or it expires. Allow it?",
		strconv.Quote(p.Consumer), strconv.Quote(strings.Join(v.Scope, ", ")), strconv.Quote(v.Purpose))
	return s.elicitDecision(ctx, p, req, v, msg, `{"type": "object",
		"properties": {"approve": {"type": "boolean", "title": "Allow", "description": "allow this app to read this data for this purpose"}},
		"required": ["approve"]}`, func(content map[string]any) (decided, approve bool) {
		approve, _ = content["approve"].(bool)
		return true, approve
	})
}

// tellUser puts a pending request for critical data to the person through
// the host's elicitation (MayTellInHost): what is asked, by whom and why,
// and that only they approve it, in phc with their password — the host
// never can. They may refuse it there, which is recorded; anything else
// leaves it pending for their approval in phc.
func (s *Server) tellUser(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest, v custodian.RequestView) (custodian.RequestView, error) {
	msg := fmt.Sprintf("The app %s asks to read your critical %s data for the purpose %s. Critical data is approved only in phc itself, "+
		"with your password: run phc approve %s (or open Requests in the console). Nothing you answer here approves it; you may refuse it here.",
		strconv.Quote(p.Consumer), strconv.Quote(strings.Join(v.Scope, ", ")), strconv.Quote(v.Purpose), v.ID)
	return s.elicitDecision(ctx, p, req, v, msg, `{"type": "object",
		"properties": {"refuse": {"type": "boolean", "title": "Refuse", "description": "refuse this request now; leave it unchecked to decide in phc"}}}`,
		func(content map[string]any) (decided, approve bool) {
			refuse, _ := content["refuse"].(bool)
			return refuse, false
		})
}

// elicitDecision asks the person message through the host's elicitation
// with schema, and records what accepted answers decide (decide reads the
// form: whether it decides, and how); a declined question is a refusal; a
// cancelled one, or a form that decides nothing, leaves v pending.
func (s *Server) elicitDecision(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest, v custodian.RequestView,
	message, schema string, decide func(content map[string]any) (decided, approve bool)) (custodian.RequestView, error) {
	if !elicits(req) {
		return v, nil
	}
	ectx, cancel := context.WithTimeout(ctx, maxCall-time.Minute)
	defer cancel()
	res, err := req.Session.Elicit(ectx, &mcp.ElicitParams{Message: message, RequestedSchema: json.RawMessage(schema)})
	if err != nil {
		s.log.Debug("elicitation failed; the request stays pending", "err", err)
		return v, nil
	}
	var out custodian.RequestView
	switch res.Action {
	case "accept":
		decided, approve := decide(res.Content)
		if !decided {
			return v, nil
		}
		out, err = s.svc.DecideByUser(ctx, p, v.ID, approve)
	case "decline":
		out, err = s.svc.DecideByUser(ctx, p, v.ID, false)
	default:
		return v, nil
	}
	if err == nil {
		return out, nil
	}
	if k := custodian.KindOf(err); k == custodian.KindLocked || k == custodian.KindInternal {
		return v, err
	}
	// Not taken (critical data, the owner's settings, a decision made
	// meanwhile): the request stands as it is now.
	s.log.Debug("the person's answer was not recorded", "err", err)
	return s.svc.PollRequest(ctx, custodian.ChannelMCP, p, v.ID)
}

// splitMember takes the first member name out of the JSON object raw and
// returns its value and the object without it, every other member kept as
// it came (duplicates included, for the core's strict decoder to judge).
func splitMember(raw json.RawMessage, name string) (json.RawMessage, []byte, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("arguments are not an object")
	}
	var val json.RawMessage
	var rest []byte
	rest = append(rest, '{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if key == name && val == nil {
			val = v
			continue
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		kb, _ := json.Marshal(key)
		rest = append(append(append(rest, kb...), ':'), v...)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("trailing data")
	}
	if val == nil {
		return nil, nil, fmt.Errorf("no %s", name)
	}
	return val, append(rest, '}'), nil
}
