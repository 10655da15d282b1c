// Package limits holds the core's rate-limiting mechanisms: token buckets
// refilled continuously at a per-minute rate (Buckets, one per key and
// kind: a service token's reads and writes), and sliding windows of failed
// attempts per key (Failures: wrong passwords, wrong consumer secrets,
// refused ID tokens), bounded in the keys they remember. Which limits a
// request meets, and at what rate, is the core's rule (package custodian).
package limits
