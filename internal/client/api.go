package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/dec/dectype"
	"github.com/phc-project/phc/quarantine/importer"
)

// The answers the daemon wraps around the core's views. Each is the JSON
// object the daemon writes; a method returns what the caller needs of it.

// PersonaWritten is the answer to a persona's creation or update.
type PersonaWritten struct {
	Persona  custodian.Persona `json:"persona"`
	Revision uint64            `json:"revision"`
}

// SettingsWritten is the answer to PUT /phc/v1/settings: the settings
// after the change, and warnings about the values set.
type SettingsWritten struct {
	Settings custodian.Settings `json:"settings"`
	Revision uint64             `json:"revision"`
	Warnings []string           `json:"warnings,omitempty"`
}

// VaultKeySet is the answer to a vault key's activation or revocation.
type VaultKeySet struct {
	Key      custodian.VaultKey `json:"vault_key"`
	Revision uint64             `json:"revision"`
}

// Adopted is the answer to POST /phc/v1/quarantine/adopt.
type Adopted = custodian.Adopted

// Rejected is the answer to POST /phc/v1/quarantine/reject.
type Rejected struct {
	Rejected int    `json:"rejected"`
	Revision uint64 `json:"revision"`
}

// Bundle is a migration bundle as the daemon streams it: the caller reads
// and closes Body.
type Bundle struct {
	Body io.ReadCloser
	// Length is the body's length, or -1 when the daemon did not say.
	Length int64
	// manifest is the PHC-Bundle-Manifest header.
	manifest string
}

// BundleManifest is what the daemon says of a bundle it made, in the
// PHC-Bundle-Manifest header: a summary of custodian.BundleManifest.
type BundleManifest struct {
	BundleID  string         `json:"bundle_id"`
	Recipient string         `json:"recipient"` // the recipient custodian's id
	Counts    map[string]int `json:"counts"`
	// LossReport is nil when the daemon left it out of a header that
	// would have grown too long.
	LossReport *[]custodian.Loss `json:"loss_report"`
}

// Manifest decodes the bundle's manifest.
func (b *Bundle) Manifest() (BundleManifest, error) {
	var m BundleManifest
	if err := json.Unmarshal([]byte(b.manifest), &m); err != nil {
		return m, errors.New("the daemon's answer has no bundle manifest")
	}
	return m, nil
}

func escape(s string) string { return url.PathEscape(s) }

// member sends a request and returns the member name of the JSON object
// the daemon answers ({"grants": […]}, {"token": "…"}); the zero T when
// the answer has none.
func member[T any](ctx context.Context, c *Client, method, path string, body any, name string) (T, error) {
	var out map[string]json.RawMessage
	var v T
	if err := c.do(ctx, method, path, body, &out); err != nil {
		return v, err
	}
	if raw, ok := out[name]; ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			return v, fmt.Errorf("malformed answer from the daemon: %w", err)
		}
	}
	return v, nil
}

// Status is GET /context/status: public, with more for the owner.
func (c *Client) Status(ctx context.Context) (custodian.Status, error) {
	var out custodian.Status
	err := c.do(ctx, "GET", "/context/status", nil, &out)
	return out, err
}

// Unlock unlocks the vault and returns the owner's new session token.
func (c *Client) Unlock(ctx context.Context, in custodian.UnlockInput) (string, error) {
	return member[string](ctx, c, "POST", "/context/unlock", in, "token")
}

// Lock locks the vault (owner).
func (c *Client) Lock(ctx context.Context) error {
	return c.do(ctx, "POST", "/context/lock", nil, nil)
}

// MintToken exchanges an app's consumer name and secret for a service
// token.
func (c *Client) MintToken(ctx context.Context, in TokenRequest) (custodian.TokenIssued, error) {
	var out custodian.TokenIssued
	err := c.do(ctx, "POST", "/context/tokens/service", in, &out)
	return out, err
}

// Tokens lists the service tokens (owner).
func (c *Client) Tokens(ctx context.Context) ([]custodian.TokenView, error) {
	return member[[]custodian.TokenView](ctx, c, "GET", "/context/tokens/service", nil, "tokens")
}

// RevokeToken revokes the service token with the prefix phc token list
// shows (owner).
func (c *Client) RevokeToken(ctx context.Context, prefix string) (uint64, error) {
	return member[uint64](ctx, c, "DELETE", "/context/tokens/service/"+escape(prefix), nil, "revision")
}

// AddConsumer registers an approved consumer (owner).
func (c *Client) AddConsumer(ctx context.Context, in custodian.ConsumerInput) (custodian.ConsumerView, error) {
	var out custodian.ConsumerView
	err := c.do(ctx, "POST", "/phc/v1/consumers", in, &out)
	return out, err
}

// Consumers lists the consumers (owner).
func (c *Client) Consumers(ctx context.Context) ([]custodian.ConsumerView, error) {
	return member[[]custodian.ConsumerView](ctx, c, "GET", "/phc/v1/consumers", nil, "consumers")
}

// ApproveConsumer approves a consumer that registered itself (owner).
func (c *Client) ApproveConsumer(ctx context.Context, name string) (custodian.ConsumerView, error) {
	var out custodian.ConsumerView
	err := c.do(ctx, "POST", "/phc/v1/consumers/"+escape(name)+"/approve", nil, &out)
	return out, err
}

// RemoveConsumer removes a consumer, its tokens and its grants (owner).
func (c *Client) RemoveConsumer(ctx context.Context, name string) (uint64, error) {
	return member[uint64](ctx, c, "DELETE", "/context/consumers/"+escape(name), nil, "revision")
}

// CreatePersona creates a persona (owner).
func (c *Client) CreatePersona(ctx context.Context, in custodian.PersonaInput) (PersonaWritten, error) {
	var out PersonaWritten
	err := c.do(ctx, "POST", "/phc/v1/personas", in, &out)
	return out, err
}

// Personas lists the personas (owner).
func (c *Client) Personas(ctx context.Context) ([]custodian.Persona, error) {
	return member[[]custodian.Persona](ctx, c, "GET", "/phc/v1/personas", nil, "personas")
}

// UpdatePersona renames a persona or replaces its preferences or
// guardrails (owner).
func (c *Client) UpdatePersona(ctx context.Context, id string, in PersonaUpdate) (PersonaWritten, error) {
	var out PersonaWritten
	err := c.do(ctx, "PUT", "/phc/v1/personas/"+escape(id), in, &out)
	return out, err
}

// DeletePersona removes a persona (owner).
func (c *Client) DeletePersona(ctx context.Context, id string) (custodian.PersonaDeleted, error) {
	var out custodian.PersonaDeleted
	err := c.do(ctx, "DELETE", "/phc/v1/personas/"+escape(id), nil, &out)
	return out, err
}

// CreateGrant grants a recipient access (owner).
func (c *Client) CreateGrant(ctx context.Context, in custodian.GrantInput) (custodian.GrantCreated, error) {
	var out custodian.GrantCreated
	err := c.do(ctx, "POST", "/phc/v1/grants", in, &out)
	return out, err
}

// Grants lists the grants, revoked ones too (owner).
func (c *Client) Grants(ctx context.Context) ([]custodian.Grant, error) {
	return member[[]custodian.Grant](ctx, c, "GET", "/phc/v1/grants", nil, "grants")
}

// RevokeGrant revokes a grant (owner).
func (c *Client) RevokeGrant(ctx context.Context, id string) (uint64, error) {
	return member[uint64](ctx, c, "DELETE", "/phc/v1/grants/"+escape(id), nil, "revision")
}

// NarrowGrant narrows a grant in force in place (owner).
func (c *Client) NarrowGrant(ctx context.Context, id string, in custodian.GrantTerms) (custodian.GrantNarrowed, error) {
	var out custodian.GrantNarrowed
	err := c.do(ctx, "POST", "/phc/v1/grants/"+escape(id)+"/narrow", in, &out)
	return out, err
}

// Propose proposes a claim (an app with a contribute grant, or the owner).
func (c *Client) Propose(ctx context.Context, in custodian.ProposalInput) (custodian.Proposed, error) {
	var out custodian.Proposed
	err := c.do(ctx, "POST", "/phc/v1/proposals", in, &out)
	return out, err
}

// Review lists the pending proposals (owner).
func (c *Client) Review(ctx context.Context) ([]custodian.ReviewItem, error) {
	return member[[]custodian.ReviewItem](ctx, c, "GET", "/phc/v1/review", nil, "proposals")
}

// Confirm confirms a proposal into a claim (owner).
func (c *Client) Confirm(ctx context.Context, id string, in custodian.ConfirmInput) (custodian.Written, error) {
	var out custodian.Written
	err := c.do(ctx, "POST", "/phc/v1/proposals/"+escape(id)+"/confirm", in, &out)
	return out, err
}

// Reject rejects a proposal (owner).
func (c *Client) Reject(ctx context.Context, id string, in custodian.RejectInput) (uint64, error) {
	return member[uint64](ctx, c, "POST", "/phc/v1/proposals/"+escape(id)+"/reject", in, "revision")
}

// ConfirmBulk confirms many proposals in one write (owner).
func (c *Client) ConfirmBulk(ctx context.Context, in custodian.BulkConfirmInput) (custodian.BulkDecision, error) {
	var out custodian.BulkDecision
	err := c.do(ctx, "POST", "/phc/v1/review/confirm", in, &out)
	return out, err
}

// RejectBulk rejects many proposals in one write (owner).
func (c *Client) RejectBulk(ctx context.Context, in custodian.BulkRejectInput) (custodian.BulkDecision, error) {
	var out custodian.BulkDecision
	err := c.do(ctx, "POST", "/phc/v1/review/reject", in, &out)
	return out, err
}

// Claims lists the owner's active claims, of keys matching key and in
// persona when they are not empty.
func (c *Client) Claims(ctx context.Context, key, persona string) (custodian.ClaimList, error) {
	q := url.Values{}
	if key != "" {
		q.Set("key", key)
	}
	if persona != "" {
		q.Set("persona", persona)
	}
	var out custodian.ClaimList
	err := c.do(ctx, "GET", "/phc/v1/claims?"+q.Encode(), nil, &out)
	return out, err
}

// Claim reads one claim.
func (c *Client) Claim(ctx context.Context, id string) (custodian.ClaimRead, error) {
	var out custodian.ClaimRead
	err := c.do(ctx, "GET", "/phc/v1/claims/"+escape(id), nil, &out)
	return out, err
}

// Versions lists every version of a claim (owner).
func (c *Client) Versions(ctx context.Context, id string) (custodian.ClaimList, error) {
	var out custodian.ClaimList
	err := c.do(ctx, "GET", "/phc/v1/claims/"+escape(id)+"/versions", nil, &out)
	return out, err
}

// Correct writes a corrected value as the claim's next version (owner).
func (c *Client) Correct(ctx context.Context, id string, in custodian.CorrectionInput) (custodian.Written, error) {
	var out custodian.Written
	err := c.do(ctx, "PUT", "/phc/v1/claims/"+escape(id), in, &out)
	return out, err
}

// DeleteClaim deletes a claim (owner).
func (c *Client) DeleteClaim(ctx context.Context, id string) (uint64, error) {
	return member[uint64](ctx, c, "DELETE", "/phc/v1/claims/"+escape(id), nil, "revision")
}

// Dispute marks a claim disputed (owner).
func (c *Client) Dispute(ctx context.Context, id string) (custodian.Written, error) {
	return c.claimWrite(ctx, "POST", id, "/dispute")
}

// WithdrawDispute withdraws the owner's dispute of a claim.
func (c *Client) WithdrawDispute(ctx context.Context, id string) (custodian.Written, error) {
	return c.claimWrite(ctx, "DELETE", id, "/dispute")
}

// Retract retracts a claim for good (owner).
func (c *Client) Retract(ctx context.Context, id string) (custodian.Written, error) {
	return c.claimWrite(ctx, "POST", id, "/retract")
}

func (c *Client) claimWrite(ctx context.Context, method, id, verb string) (custodian.Written, error) {
	var out custodian.Written
	err := c.do(ctx, method, "/phc/v1/claims/"+escape(id)+verb, nil, &out)
	return out, err
}

// PutField writes a field (PUT /context/fields/{id}); the answer, the
// field written or the proposal it became, is not decoded.
func (c *Client) PutField(ctx context.Context, id string, in custodian.FieldInput) error {
	return c.do(ctx, "PUT", "/context/fields/"+escape(id), in, nil)
}

// Receipts returns the newest receipts, at most limit (owner).
func (c *Client) Receipts(ctx context.Context, limit int) ([]custodian.Receipt, error) {
	return member[[]custodian.Receipt](ctx, c, "GET", "/phc/v1/receipts?limit="+strconv.Itoa(limit), nil, "receipts")
}

// VerifyReceipts verifies the receipts' hash chain (owner).
func (c *Client) VerifyReceipts(ctx context.Context) (custodian.Verification, error) {
	var out custodian.Verification
	err := c.do(ctx, "GET", "/phc/v1/receipts/verify", nil, &out)
	return out, err
}

// CreateEntity creates an entity, and a claim of its name if it has one
// (owner).
func (c *Client) CreateEntity(ctx context.Context, in custodian.EntityInput) (custodian.EntityCreated, error) {
	var out custodian.EntityCreated
	err := c.do(ctx, "POST", "/phc/v1/entities", in, &out)
	return out, err
}

// Entities lists the entities (owner).
func (c *Client) Entities(ctx context.Context) ([]custodian.Entity, error) {
	return member[[]custodian.Entity](ctx, c, "GET", "/phc/v1/entities", nil, "entities")
}

// CreateSummary writes a summary derived from claim versions.
func (c *Client) CreateSummary(ctx context.Context, in custodian.SummaryInput) (custodian.SummaryWritten, error) {
	var out custodian.SummaryWritten
	err := c.do(ctx, "POST", "/phc/v1/summaries", in, &out)
	return out, err
}

// Summaries lists the summaries (owner).
func (c *Client) Summaries(ctx context.Context) ([]custodian.Summary, error) {
	return member[[]custodian.Summary](ctx, c, "GET", "/phc/v1/summaries", nil, "summaries")
}

// Neighbors traverses the graph from q.Node (q.Node, q.Depth, q.Limit and
// q.Cursor are sent).
func (c *Client) Neighbors(ctx context.Context, q custodian.NeighborQuery) (custodian.Neighbors, error) {
	v := url.Values{}
	if q.Depth != 0 {
		v.Set("depth", strconv.Itoa(q.Depth))
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	path := "/phc/v1/graph/neighbors/" + escape(q.Node)
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out custodian.Neighbors
	err := c.do(ctx, "GET", path, nil, &out)
	return out, err
}

// Check checks the graph, the receipts and the summaries against the
// store (owner).
func (c *Client) Check(ctx context.Context) (custodian.CheckReport, error) {
	var out custodian.CheckReport
	err := c.do(ctx, "GET", "/phc/v1/check", nil, &out)
	return out, err
}

// RebuildGraph rebuilds the graph from the store (owner).
func (c *Client) RebuildGraph(ctx context.Context) (uint64, error) {
	return member[uint64](ctx, c, "POST", "/phc/v1/graph/rebuild", nil, "revision")
}

// ExportGraph returns the graph in format (nquads or prov-jsonld) (owner).
func (c *Client) ExportGraph(ctx context.Context, format string) ([]byte, error) {
	return c.bytes(ctx, "GET", "/phc/v1/graph/export?format="+url.QueryEscape(format), nil)
}

// Card returns this custodian's public card (owner).
func (c *Client) Card(ctx context.Context) (custodian.Card, error) {
	var out custodian.Card
	err := c.do(ctx, "GET", "/phc/v1/card", nil, &out)
	return out, err
}

// PinCustodian pins another custodian's card, sent as it was read
// (owner).
func (c *Client) PinCustodian(ctx context.Context, card json.RawMessage) (custodian.PinnedCustodian, error) {
	var out custodian.PinnedCustodian
	err := c.do(ctx, "POST", "/phc/v1/custodians", rawBody(card), &out)
	return out, err
}

// Custodians lists the pinned custodians (owner).
func (c *Client) Custodians(ctx context.Context) ([]custodian.PinnedCustodian, error) {
	return member[[]custodian.PinnedCustodian](ctx, c, "GET", "/phc/v1/custodians", nil, "custodians")
}

// UnpinCustodian unpins a custodian (owner).
func (c *Client) UnpinCustodian(ctx context.Context, id string) (uint64, error) {
	return member[uint64](ctx, c, "DELETE", "/phc/v1/custodians/"+escape(id), nil, "revision")
}

// ExportBundle makes a migration bundle for the custodian whose card is
// in.To (owner). The caller reads and closes the bundle's body.
func (c *Client) ExportBundle(ctx context.Context, in custodian.ExportInput) (*Bundle, error) {
	resp, err := c.send(ctx, "POST", "/phc/v1/export", in)
	if err != nil {
		return nil, err
	}
	return &Bundle{Body: resp.Body, Length: resp.ContentLength, manifest: resp.Header.Get("PHC-Bundle-Manifest")}, nil
}

// ImportBundle imports a migration bundle, sent as it was read, into the
// quarantine (owner).
func (c *Client) ImportBundle(ctx context.Context, bundle []byte) (custodian.ImportReport, error) {
	var out custodian.ImportReport
	err := c.do(ctx, "POST", "/phc/v1/import", rawBody(bundle), &out)
	return out, err
}

// ImportBundleParts sends a bundle in parts — the zip archive of its
// parts, size bytes read from parts — to be held in the quarantine
// (owner).
func (c *Client) ImportBundleParts(ctx context.Context, parts io.Reader, size int64) (custodian.ImportReport, error) {
	var out custodian.ImportReport
	err := c.do(ctx, "POST", "/phc/v1/import?parts=zip", streamBody{r: parts, n: size}, &out)
	return out, err
}

// ImportExport sends another memory system's export, size bytes read
// from export, to be held in the quarantine (owner): from names its source
// ("auto" detects it), name is its file name, mapping a key map (nil:
// none).
func (c *Client) ImportExport(ctx context.Context, from, name string, mapping importer.Map, export io.Reader, size int64) (importer.Result, error) {
	v := url.Values{"from": {from}}
	if name != "" {
		v.Set("name", name)
	}
	h := http.Header{}
	if mapping != nil {
		raw, err := json.Marshal(mapping)
		if err != nil {
			return importer.Result{}, err
		}
		h.Set(importer.MapHeader, string(raw))
	}
	var out importer.Result
	err := c.do(ctx, "POST", "/phc/v1/import?"+v.Encode(), streamBody{r: export, n: size, header: h}, &out)
	return out, err
}

// Quarantine returns a page of held records (owner); q's zero members are
// not sent.
func (c *Client) Quarantine(ctx context.Context, q custodian.QuarantineQuery) (custodian.QuarantinePage, error) {
	v := url.Values{}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	for k, x := range map[string]string{"status": q.Status, "problem": q.Problem, "cursor": q.Cursor} {
		if x != "" {
			v.Set(k, x)
		}
	}
	path := "/phc/v1/quarantine"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out custodian.QuarantinePage
	err := c.do(ctx, "GET", path, nil, &out)
	return out, err
}

// Adopt adopts held claims (owner).
func (c *Client) Adopt(ctx context.Context, in custodian.AdoptInput) (Adopted, error) {
	var out Adopted
	err := c.do(ctx, "POST", "/phc/v1/quarantine/adopt", in, &out)
	return out, err
}

// Unblock removes unknown restriction types from a held record (owner).
func (c *Client) Unblock(ctx context.Context, id string, in custodian.UnblockInput) (custodian.QuarantineRecord, error) {
	var out custodian.QuarantineRecord
	err := c.do(ctx, "POST", "/phc/v1/quarantine/"+escape(id)+"/unblock", in, &out)
	return out, err
}

// RejectHeld rejects held records (owner).
func (c *Client) RejectHeld(ctx context.Context, in custodian.QuarantineRejectInput) (Rejected, error) {
	var out Rejected
	err := c.do(ctx, "POST", "/phc/v1/quarantine/reject", in, &out)
	return out, err
}

// AddTrust trusts an OIDC issuer (owner).
func (c *Client) AddTrust(ctx context.Context, in custodian.TrustInput) (custodian.TrustAdded, error) {
	var out custodian.TrustAdded
	err := c.do(ctx, "POST", "/phc/v1/trust", in, &out)
	return out, err
}

// Trust lists the trusted OIDC issuers (owner).
func (c *Client) Trust(ctx context.Context) ([]custodian.TrustedIssuer, error) {
	return member[[]custodian.TrustedIssuer](ctx, c, "GET", "/phc/v1/trust", nil, "trust")
}

// RemoveTrust removes a trusted issuer (owner).
func (c *Client) RemoveTrust(ctx context.Context, id string) (uint64, error) {
	return member[uint64](ctx, c, "DELETE", "/phc/v1/trust/"+escape(id), nil, "revision")
}

// PinDECIssuer pins a DEC issuer's keys (owner).
func (c *Client) PinDECIssuer(ctx context.Context, in custodian.DECTrustInput) (custodian.DECIssuer, error) {
	var out custodian.DECIssuer
	err := c.do(ctx, "POST", "/phc/v1/dec/trust", in, &out)
	return out, err
}

// UnrevokeDECKey withdraws the revocation of a pinned issuer's key
// (owner).
func (c *Client) UnrevokeDECKey(ctx context.Context, in custodian.DECUnrevokeInput) (custodian.DECIssuer, error) {
	var out custodian.DECIssuer
	err := c.do(ctx, "POST", "/phc/v1/dec/trust/unrevoke", in, &out)
	return out, err
}

// DECTrust lists the pinned DEC issuers and the admission policies
// (owner).
func (c *Client) DECTrust(ctx context.Context) (custodian.DECTrust, error) {
	var out custodian.DECTrust
	err := c.do(ctx, "GET", "/phc/v1/dec/trust", nil, &out)
	return out, err
}

// AddDECPolicy adds an admission policy, sent as it was read (owner).
func (c *Client) AddDECPolicy(ctx context.Context, policy []byte) (custodian.DECPolicy, error) {
	var out custodian.DECPolicy
	err := c.do(ctx, "POST", "/phc/v1/dec/policies", rawBody(policy), &out)
	return out, err
}

// VerifyDEC verifies a DEC document, sent as it was read, against the
// pinned issuers (owner).
func (c *Client) VerifyDEC(ctx context.Context, doc []byte) (dectype.Report, error) {
	var out dectype.Report
	err := c.do(ctx, "POST", "/phc/v1/dec/verify", rawBody(doc), &out)
	return out, err
}

// Settings returns the owner's settings.
func (c *Client) Settings(ctx context.Context) (custodian.Settings, error) {
	var out custodian.Settings
	err := c.do(ctx, "GET", "/phc/v1/settings", nil, &out)
	return out, err
}

// PutSettings changes the settings patch names (owner).
func (c *Client) PutSettings(ctx context.Context, patch SettingsPatch) (SettingsWritten, error) {
	var out SettingsWritten
	err := c.do(ctx, "PUT", "/phc/v1/settings", patch, &out)
	return out, err
}

// Requests lists the apps' context requests (owner).
func (c *Client) Requests(ctx context.Context) ([]custodian.ContextRequest, error) {
	return member[[]custodian.ContextRequest](ctx, c, "GET", "/context/requests", nil, "requests")
}

// DecideRequest approves or denies a context request (owner).
func (c *Client) DecideRequest(ctx context.Context, id string, approve bool, in custodian.DecisionInput) (custodian.ContextRequest, error) {
	verb := "deny"
	if approve {
		verb = "approve"
	}
	var out custodian.ContextRequest
	err := c.do(ctx, "POST", "/context/requests/"+escape(id)+"/"+verb, in, &out)
	return out, err
}

// VaultKeys lists the Client-Vault keys readers bound (owner).
func (c *Client) VaultKeys(ctx context.Context) ([]custodian.VaultKey, error) {
	return member[[]custodian.VaultKey](ctx, c, "GET", "/phc/v1/vault-keys", nil, "vault_keys")
}

// SetVaultKey activates (activate) or revokes (revoke) a vault key
// (owner).
func (c *Client) SetVaultKey(ctx context.Context, verb string, in VaultKeyRequest) (VaultKeySet, error) {
	if verb != "activate" && verb != "revoke" {
		return VaultKeySet{}, fmt.Errorf("vault key: %q is neither activate nor revoke", verb)
	}
	var out VaultKeySet
	err := c.do(ctx, "POST", "/phc/v1/vault-keys/"+verb, in, &out)
	return out, err
}

// ExportArchive returns a backup of the vault: its claims and personas,
// sealed under its password and Secret Key (owner).
func (c *Client) ExportArchive(ctx context.Context) ([]byte, error) {
	return c.bytes(ctx, "GET", "/context/export", nil)
}

// ImportArchive restores a backup (owner).
func (c *Client) ImportArchive(ctx context.Context, in custodian.ImportInput) (custodian.ImportResult, error) {
	var out custodian.ImportResult
	err := c.do(ctx, "POST", "/context/import", in, &out)
	return out, err
}

// UILink returns the path of a one-time sign-in link to the owner's
// console (owner).
func (c *Client) UILink(ctx context.Context) (string, error) {
	return member[string](ctx, c, "POST", "/ui/link", nil, "path")
}
