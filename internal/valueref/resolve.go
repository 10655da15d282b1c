package valueref

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"
)

// Limits of the Client-Vault v=1 protocol.
const (
	MaxRefs = 100      // keys in one resolve
	MaxBody = 64 << 10 // bytes of one resolve body
)

// Kid returns the kid of the secret K: standard base64, with padding, of
// SHA-256(K).
func Kid(k []byte) string {
	h := sha256.Sum256(k)
	return base64.StdEncoding.EncodeToString(h[:])
}

// ValidKid reports whether kid is standard base64 of 32 bytes.
func ValidKid(kid string) bool {
	b, err := base64.StdEncoding.Strict().DecodeString(kid)
	return err == nil && len(b) == sha256.Size
}

// ParseBearer decodes K as a resolve request presents it: base64url
// without padding, 32 bytes.
func ParseBearer(bearer string) ([]byte, bool) {
	k, err := base64.RawURLEncoding.Strict().DecodeString(bearer)
	return k, err == nil && len(k) == 32
}

// Request is a resolve request's body: the client's clock, and each key
// with the time the vault first saw it.
type Request struct {
	Now  time.Time
	Refs []Ref
}

// Ref is one key of a [Request].
type Ref struct {
	Key    string
	SeenAt time.Time
}

// Keys returns the keys of r, in order.
func (r Request) Keys() []string {
	out := make([]string, 0, len(r.Refs))
	for _, ref := range r.Refs {
		out = append(out, ref.Key)
	}
	return out
}

// Codes of a refused resolve body, as the protocol's error table names
// them.
const (
	CodeBadRequest  = "bad_request"
	CodeTooManyRefs = "too_many_refs"
)

// Error is why a resolve body is refused: its protocol code, and for
// bad_request what is wrong, never quoting the body.
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string {
	if e.Msg == "" {
		return e.Code
	}
	return e.Code + ": " + e.Msg
}

func bad(msg string) *Error { return &Error{Code: CodeBadRequest, Msg: msg} }

// body is a resolve body as sent: every member may be missing.
type body struct {
	Now  *string `json:"now"`
	Refs *[]struct {
		Key    *string `json:"key"`
		SeenAt *string `json:"seen_at"`
	} `json:"refs"`
}

// ParseRequest reads a resolve body (whose size the caller bounds, see
// [MaxBody]): a JSON object with now and refs, each ref with key and
// seen_at, times in RFC 3339, then [Request.Check]. A refusal is an
// [*Error].
func ParseRequest(raw []byte) (Request, error) {
	var in body
	if err := json.Unmarshal(raw, &in); err != nil {
		return Request{}, bad("the body is not a JSON object with now and refs")
	}
	if in.Now == nil || in.Refs == nil {
		return Request{}, bad("the body needs now and refs")
	}
	now, err := time.Parse(time.RFC3339, *in.Now)
	if err != nil {
		return Request{}, bad("now is not an RFC 3339 time")
	}
	if len(*in.Refs) > MaxRefs {
		return Request{}, &Error{Code: CodeTooManyRefs}
	}
	req := Request{Now: now, Refs: make([]Ref, 0, len(*in.Refs))}
	for _, r := range *in.Refs {
		if r.Key == nil || r.SeenAt == nil {
			return Request{}, bad("each ref needs key and seen_at")
		}
		if !ValidKey(*r.Key) {
			return Request{}, bad("a key is not one this custodian mints (TYPE_N)")
		}
		if req.has(*r.Key) {
			return Request{}, bad("a key is repeated")
		}
		t, err := time.Parse(time.RFC3339, *r.SeenAt)
		if err != nil {
			return Request{}, bad("seen_at is not an RFC 3339 time")
		}
		req.Refs = append(req.Refs, Ref{Key: *r.Key, SeenAt: t})
	}
	return req, nil
}

func (r Request) has(key string) bool {
	for _, ref := range r.Refs {
		if ref.Key == key {
			return true
		}
	}
	return false
}

// Check holds r to the rules of a body: at most [MaxRefs] keys, each one
// a custodian mints, listed once. A refusal is an [*Error].
func (r Request) Check() error {
	if len(r.Refs) > MaxRefs {
		return &Error{Code: CodeTooManyRefs}
	}
	for i, ref := range r.Refs {
		if !ValidKey(ref.Key) {
			return bad("a key is not one this custodian mints (TYPE_N)")
		}
		if (Request{Refs: r.Refs[:i]}).has(ref.Key) {
			return bad("a key is repeated")
		}
	}
	return nil
}

// Body is a resolve body as the custodian's endpoint received it: its
// size, and the request it holds, or why it holds none. The custodian
// answers the size first and the request's refusal only once K is known,
// as the protocol orders its checks; so a body is read before, and
// judged after.
type Body struct {
	Size    int
	Request Request
	Err     *Error // nil: Request is the body's
}

// ReadBody reads raw, a resolve body, with [ParseRequest]; one above
// [MaxBody] bytes is not parsed.
func ReadBody(raw []byte) Body {
	b := Body{Size: len(raw)}
	if b.Size > MaxBody {
		return b
	}
	req, err := ParseRequest(raw)
	if err != nil {
		b.Err = err.(*Error)
		return b
	}
	b.Request = req
	return b
}
