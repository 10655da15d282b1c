// Package model holds the records of a person's context as the core keeps
// them — claims and their versions, personas, grants, consumers and their
// tokens, access requests, trusted issuers, summaries, entities, the
// owner's settings — and the shapes of what the core is asked (inputs.go)
// and answers (claims.go, access.go, imports.go); the one strict decoding
// of request bodies into inputs (decode.go); the format of a relationship
// claim; and the domain error type with its one table of statuses and PCP
// constraint codes (errors.go).
//
// It is data, not rules: the few methods here answer from a record alone
// (a grant's time window, a token's mode, an error's wire form). What a
// principal may do with a record is decided in package custodian, which
// names these types through aliases (custodian/model_aliases.go), so that
// adapters keep using custodian.Claim, custodian.Grant and custodian.Error.
// The storage engine (custodian/internal/engine) holds them in memory.
package model
