package cli

import (
	"encoding/json"
	"time"

	"github.com/phc-project/phc/custodian"
)

// The --json output of the commands that print part of the daemon's
// answer: each is what the command has always printed, a subset of the
// core's view, kept so that scripts reading it see no change. The other
// commands' --json prints the daemon's answer as it is.

// verificationJSON is phc receipts --verify --json.
type verificationJSON struct {
	OK       bool     `json:"ok"`
	Count    uint64   `json:"count"`
	Problems []string `json:"problems"`
}

// receiptsJSON is phc receipts --json.
type receiptsJSON struct {
	Receipts []receiptJSON `json:"receipts"`
}

type receiptJSON struct {
	Seq        uint64    `json:"seq"`
	At         time.Time `json:"at"`
	Actor      string    `json:"actor"`
	Operation  string    `json:"operation"`
	Recipient  string    `json:"recipient"`
	Purpose    string    `json:"purpose"`
	Decision   string    `json:"decision"`
	Constraint string    `json:"constraint"`
	Records    []string  `json:"records"`
}

func receiptsJSONOf(rs []custodian.Receipt) receiptsJSON {
	return receiptsJSON{Receipts: jsonList(rs, func(r custodian.Receipt) receiptJSON {
		return receiptJSON{Seq: r.Seq, At: r.At, Actor: r.Actor, Operation: r.Operation,
			Recipient: r.Recipient, Purpose: r.Purpose, Decision: r.Decision, Constraint: r.Constraint, Records: r.Records}
	})}
}

// jsonList maps xs by f, keeping the difference the daemon's answer made
// between a null list and an empty one: nil stays nil, [] stays [].
func jsonList[T, U any](xs []T, f func(T) U) []U {
	if xs == nil {
		return nil
	}
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

// tokensJSON is phc token list --json.
type tokensJSON struct {
	Tokens []tokenJSON `json:"tokens"`
}

type tokenJSON struct {
	Prefix    string    `json:"prefix"`
	Consumer  string    `json:"consumer"`
	Scope     []string  `json:"scope"`
	Mode      string    `json:"mode"`
	ExpiresAt time.Time `json:"expires_at"`
	Active    bool      `json:"active"`
}

func tokensJSONOf(ts []custodian.TokenView) tokensJSON {
	return tokensJSON{Tokens: jsonList(ts, func(t custodian.TokenView) tokenJSON {
		return tokenJSON{Prefix: t.Prefix, Consumer: t.Consumer, Scope: t.Scope, Mode: t.Mode, ExpiresAt: t.ExpiresAt, Active: t.Active}
	})}
}

// claimsJSON is phc claims --json: a list of claims (list, versions) or
// one claim (show, correct, dispute, …), and the revision.
type claimsJSON struct {
	Claims   []claimJSON `json:"claims"`
	Claim    *claimJSON  `json:"claim"`
	Revision uint64      `json:"revision"`
}

type claimJSON struct {
	ID           string                `json:"id"`
	Version      int                   `json:"version"`
	Key          string                `json:"key"`
	Value        json.RawMessage       `json:"value"`
	Kind         string                `json:"kind"`
	Assertion    string                `json:"assertion"`
	Status       string                `json:"status"`
	Personas     []string              `json:"personas"`
	WrittenBy    string                `json:"written_by"`
	Sensitivity  string                `json:"sensitivity"`
	Confirmation claimConfirmationJSON `json:"confirmation"`
	claim        custodian.Claim       // the claim as the daemon answered it, for the text output
}

type claimConfirmationJSON struct {
	Status string `json:"status"`
}

func claimJSONOf(c custodian.Claim) claimJSON {
	return claimJSON{ID: c.ID, Version: c.Version, Key: c.Key, Value: c.Value, Kind: c.Kind, Assertion: c.Assertion,
		Status: c.Status, Personas: c.Personas, WrittenBy: c.WrittenBy, Sensitivity: c.Sensitivity,
		Confirmation: claimConfirmationJSON{Status: c.Confirmation.Status}, claim: c}
}

// claimListJSON is claimsJSON of a list (nil for none) or of one claim
// (nil for none).
func claimListJSON(list []custodian.Claim, one *custodian.Claim, rev uint64) claimsJSON {
	out := claimsJSON{Claims: jsonList(list, claimJSONOf), Revision: rev}
	if one != nil {
		j := claimJSONOf(*one)
		out.Claim = &j
	}
	return out
}

// requestsJSON is phc requests --json.
type requestsJSON struct {
	Requests []requestJSON `json:"requests"`
}

type requestJSON struct {
	ID       string   `json:"request_id"`
	Consumer string   `json:"consumer"`
	Scope    []string `json:"scope"`
	Purpose  string   `json:"purpose"`
	Category string   `json:"purpose_category"`
	Tier     string   `json:"tier"`
	Status   string   `json:"status"`
	Duration int64    `json:"duration_seconds"`
	Usage    string   `json:"usage"`
}

func requestsJSONOf(rs []custodian.ContextRequest) requestsJSON {
	return requestsJSON{Requests: jsonList(rs, func(r custodian.ContextRequest) requestJSON {
		return requestJSON{ID: r.ID, Consumer: r.Consumer, Scope: r.Scope, Purpose: r.Purpose,
			Category: r.Category, Tier: r.Tier, Status: r.Status, Duration: r.Duration, Usage: r.Usage}
	})}
}

// vaultKeysJSON is phc vault-keys --json.
type vaultKeysJSON struct {
	Keys []vaultKeyJSON `json:"vault_keys"`
}

type vaultKeyJSON struct {
	ID        string    `json:"id"`
	Kid       string    `json:"kid"`
	Reader    string    `json:"reader"`
	Status    string    `json:"status"`
	FirstSeen time.Time `json:"first_seen"`
	BlockedBy string    `json:"blocked_by"`
}

func vaultKeysJSONOf(ks []custodian.VaultKey) vaultKeysJSON {
	return vaultKeysJSON{Keys: jsonList(ks, func(k custodian.VaultKey) vaultKeyJSON {
		return vaultKeyJSON{ID: k.ID, Kid: k.Kid, Reader: k.Reader, Status: k.Status, FirstSeen: k.FirstSeen, BlockedBy: k.BlockedBy}
	})}
}
