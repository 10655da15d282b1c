// Package limits holds the core's rate-limiting mechanisms: token buckets
// refilled continuously at a per-minute rate (Buckets, one per key and
// kind: a service token's reads and writes), and sliding windows of failed
// attempts per key (Failures: re-entered passwords, refused ID tokens),
// bounded in the keys they remember; and Coalescer, which counts the
// refusals anyone may cause per caller and constraint, so that their
// receipts grow by the minute and not by the request.
//
// Credentials anyone on the machine can send are limited per Source, the
// peer its adapter names, so that failures slow down their sender and
// never the owner or an app: Unlock classes unlock attempts by their
// Secret Key before any key derivation, Secrets counts wrong consumer
// secrets per connection, and refused ID tokens count per connection
// ([Source.Conn]), never per the subject they claim. Which limits a
// request meets, and at what rate, is the core's rule (package custodian).
package limits
