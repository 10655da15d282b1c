package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/phc-project/phc/custodian"
)

// anyJSON is the explicit schema of a value that may be any JSON. The Go
// SDK would infer the boolean schema true for it, which the TypeScript
// SDK's client refuses (it then rejects the whole tools/list).
const anyJSON = `{"description": "any JSON value", "type": ["string", "number", "integer", "boolean", "object", "array", "null"]}`

const purposeSchema = `{"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[A-Za-z0-9][A-Za-z0-9 _.:-]*$",
	"description": "why the context is needed; grants are per purpose"}`

const fieldIDSchema = `{"type": "string", "maxLength": 256, "pattern": "^[a-z0-9][a-z0-9_-]{0,63}(\\.[a-z0-9][a-z0-9_-]{0,63}){0,15}$",
	"description": "a field id in dot notation, e.g. identity.full_name"}`

const tierSchema = `{"type": "string", "enum": ["public", "standard", "sensitive", "critical"]}`

const fieldSchema = `{"type": "object", "properties": {
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
					"kind": {"type": "string", "enum": ["fact", "preference", "goal", "commitment", "decision", "relationship", "note"]},
					"assertion": {"type": "string", "enum": ["reported", "observed", "inferred", "source_reference"]},
					"subject": {"type": "string", "pattern": "^(self|ent_[A-Z2-7]{26})$"},
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
			return svc.Propose(ctx, p, req.Params.Arguments)
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
			Description:  "The fields you may read, without their values.",
			InputSchema:  schema(`{"type": "object", "additionalProperties": false, "properties": {"purpose": ` + purposeSchema + `}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"context_version": {"type": "string"}, "fields": {"type": "array", "items": ` + fieldSchema + `}, "revision": {"type": "integer"}, ` + errorProps + `}}`),
			Annotations:  readOnly,
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			var in struct {
				Purpose string `json:"purpose"`
			}
			if err := args(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return svc.ListFields(ctx, p, in.Purpose)
		}},

		{&mcp.Tool{
			Name:         "context_get",
			Title:        "Read one field",
			Description:  "One field with its value, if you may read it for the purpose.",
			InputSchema:  schema(`{"type": "object", "required": ["id"], "additionalProperties": false, "properties": {"id": ` + fieldIDSchema + `, "purpose": ` + purposeSchema + `}}`),
			OutputSchema: schema(fieldSchemaWith(`"revision": {"type": "integer"}, "warnings": {"type": "array", "items": {"type": "string"}}, ` + errorProps)),
			Annotations:  readOnly,
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			var in struct {
				ID      string `json:"id"`
				Purpose string `json:"purpose"`
			}
			if err := args(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return svc.GetField(ctx, p, in.ID, in.Purpose)
		}},

		{&mcp.Tool{
			Name:        "context_context",
			Title:       "Read context by category",
			Description: "Every field you may read for the purpose, with values, grouped by category.",
			InputSchema: schema(`{"type": "object", "additionalProperties": false, "properties": {"purpose": ` + purposeSchema + `}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"context_version": {"type": "string"},
				"categories": {"type": "object", "additionalProperties": {"type": "array", "items": ` + fieldSchema + `}},
				"revision": {"type": "integer"}, "warnings": {"type": "array", "items": {"type": "string"}}, ` + errorProps + `}}`),
			Annotations: readOnly,
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			var in struct {
				Purpose string `json:"purpose"`
			}
			if err := args(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return svc.FieldContext(ctx, p, in.Purpose)
		}},

		{&mcp.Tool{
			Name:  "context_set",
			Title: "Write one field",
			Description: "Write a field under PCP rules: an app's write of public or standard data is confirmed by the person's policy, " +
				"anything else waits for the person's review (status pending).",
			InputSchema: schema(`{"type": "object", "required": ["id", "value"], "additionalProperties": false,
				"properties": {"id": ` + fieldIDSchema + `, "value": ` + anyJSON + `, "sensitivity": ` + tierSchema + `}}`),
			OutputSchema: schema(fieldSchemaWith(`"revision": {"type": "integer"}, "warnings": {"type": "array", "items": {"type": "string"}},
				"proposal_id": {"type": "string"}, "status": {"type": "string"}, ` + errorProps)),
			Annotations: &mcp.ToolAnnotations{Title: "Write one field", DestructiveHint: boolPtr(true), IdempotentHint: true, OpenWorldHint: boolPtr(false)},
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			var in struct {
				ID          string          `json:"id"`
				Value       json.RawMessage `json:"value"`
				Sensitivity string          `json:"sensitivity,omitempty"`
			}
			if err := args(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			body, _ := json.Marshal(map[string]any{"value": in.Value, "sensitivity": in.Sensitivity})
			if in.Sensitivity == "" {
				body, _ = json.Marshal(map[string]any{"value": in.Value})
			}
			f, pending, err := svc.PutField(ctx, p, in.ID, body)
			if err != nil {
				return nil, err
			}
			if pending != nil {
				return pending, nil
			}
			return f, nil
		}},

		{&mcp.Tool{
			Name:  "request_context",
			Title: "Ask for more context",
			Description: "Ask the person for access to a scope (a key pattern such as health.* ) for a purpose. " +
				"Public and standard data is granted at once; sensitive and critical data waits for the person's approval " +
				"(status pending, with a request_id to ask about later).",
			InputSchema: schema(`{"type": "object", "required": ["scope", "purpose"], "additionalProperties": false, "properties": {
				"scope": {"type": "string", "maxLength": 1024, "description": "key patterns, space separated: identity.* health.allergies"},
				"purpose": ` + purposeSchema + `,
				"duration": {"type": ["string", "integer"], "description": "how long, as 3600 (seconds) or 1h"},
				"usage": {"type": "string", "enum": ["single", "multi"]}}}`),
			OutputSchema: schema(`{"type": "object", "properties": {"request_id": {"type": "string"}, "status": {"type": "string"},
				"scope": {"type": "array", "items": {"type": "string"}}, "purpose": {"type": "string"}, "expires_at": {"type": "string"},
				"revision": {"type": "integer"}, ` + errorProps + `}}`),
			Annotations: &mcp.ToolAnnotations{Title: "Ask for more context", DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
		}, func(ctx context.Context, p custodian.Principal, req *mcp.CallToolRequest) (any, error) {
			var in struct {
				Scope    string          `json:"scope"`
				Purpose  string          `json:"purpose"`
				Duration json.RawMessage `json:"duration,omitempty"`
				Usage    string          `json:"usage,omitempty"`
			}
			if err := args(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			v, err := svc.RequestContext(ctx, p, req.Params.Arguments)
			if err != nil {
				return nil, err
			}
			// A bearer token never enters the model's context: the grant is
			// this consumer's either way, and the app fetches a token with
			// the new scope over HTTP, outside the model's channel.
			v.Token = ""
			return v, nil
		}},
	}
}

// fieldSchemaWith is the field schema with more properties.
func fieldSchemaWith(more string) string {
	return fieldSchema[:len(fieldSchema)-2] + `, ` + more + `}}`
}

func (s *Server) addTools() {
	for _, t := range s.tools() {
		s.mcp.AddTool(t.def, s.handler(t.def.Name, t.fn))
	}
}
