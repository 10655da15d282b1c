// Package quarantine owns what it means for a vault to hold foreign
// records until its owner decides: the migration bundle's format and its
// checks, the records every way in hands over ([Records]: bundles, another
// vault's archive, the importers of package quarantine/importer), the held
// record ([Held]) with its provenance, foreign identities and their
// mapping, blocked records and the loss report, and the holding itself:
// where a vault keeps held records ([Put], [Hold], the buckets), the index
// it keeps of them ([Index]), reading them back ([Read]), rejecting ([Reject])
// and adopting ([Adopt]) one, many or all of them, a chunk at a time.
//
// The vault lends it a narrow interface: its store through [Writer] and
// [Reader] (in its journal), its index under its locks ([Vault]), and the
// one step that is the vault's own — turning a chunk of held records into
// claims by its rules — as the function [Adopt] calls. That step, and
// which records are held with which problems, are package custodian's
// (custodian/internal/migration beside the core); this package knows
// nothing of claims as a vault keeps them and never imports custodian.
//
// # The pipeline
//
// A bundle is sealed by its source for one recipient (internal/bundle signs
// and encrypts it). Once the codec has verified the signature, [Open]
// checks the payload — {"manifest", "records"} with no other member — as
// the recipient: the format version ([BundleVersion]), that the manifest names
// the signer as its source and the recipient as its recipient, a
// well-formed bundle id, and records_digest against the records' bytes. It
// returns the manifest and the [Records] before validation.
//
// [Records] is also what an importer of another memory format yields: one
// [Claim] (every version in the PHC JSON binding, oldest first) per claim,
// personas, entities and summaries as binding documents, and the producers
// as [IdentityRef]s. The core validates each record against the binding's
// schema, so an importer need not.
//
// Producers stay foreign until the owner maps them: [ForeignID] names one,
// [Identities] finds the foreign name of a producer. [JudgeClaim] and
// [Blocking] reconstruct restrictions: an unknown mandatory restriction
// blocks a record (it may not be adopted until the owner removes it, see
// [Unblocked]); an unknown advisory one, on any version, is dropped and
// reported in the [Loss] report, beside what the source left behind. A
// claim is adopted with the union of its versions' restrictions, so no
// version is judged alone. [NeverSent] blocks a record that carries a
// restriction keeping it with its source (no_export, source_controlled,
// third_party): it should never have been sent, and no unblock clears it.
//
// # What the owner sees
//
// A held record is a [Held]: what it is, where it came from, the tier and
// restrictions it would be adopted with, its status ([StatusQuarantined]
// or [StatusBlocked]) and its problems in words. The
// answer of an import is a [Report].
//
// # What a vault keeps of what it holds
//
// A vault keeps the held records (descriptions and bodies) in its store
// and an [Index] of them in memory: each record's revision, kind, status
// and problems, which orders, counts and selects them ([Index.Select] runs
// a [Query]; the page's records are then read from the store), and names
// what an adopt of all or a reject of all takes ([Index.Adoptable],
// [Index.IDs]). Nothing held is in the vault's view of claims: no read,
// count, search or graph edge can reach it.
//
// # Bundle format 0.1
//
// The payload the source signs is a JSON object with exactly two members:
//
//	{"manifest": {
//	   "bundle_version": "0.1",
//	   "bundle_id": "bnd_…",
//	   "created_at": "2026-01-02T03:04:05Z",
//	   "source":    {"custodian_id": "cus_…"},
//	   "recipient": {"custodian_id": "cus_…"},
//	   "counts": {"claims": 1, "versions": 2, …},
//	   "loss_report": [{"record": "clm_…", "dropped": "claim", "reason": "no_export"}],
//	   "records_digest": "sha256:<hex of SHA-256 over the records' JSON bytes>"},
//	 "records": {"claims": [{"id": "clm_…", "personas": ["work"], "versions": [claim, …]}],
//	   "personas": [persona, …], "entities": [entity, …], "summaries": [summary, …],
//	   "identities": [{"source_issuer": "phc:consumer", "source_id": "tutor", "display": "consumer:tutor"}]}}
//
// Every claim, persona, entity and summary is a document of the PHC JSON
// binding. A bundle never carries grants, tokens, consumers, secrets, keys
// or receipts.
package quarantine
