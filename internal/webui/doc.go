// Package webui is the owner's console: server-rendered pages under /ui
// that the daemon serves from embedded assets, for reviewing proposals,
// deciding requests and apps, granting and revoking, browsing claims,
// personas, summaries and receipts, and drawing provenance as SVG.
//
// It is an adapter like internal/httpapi: each handler decodes a form,
// calls one custodian method and renders the answer; errors are shown
// through [custodian.Describe], never invented here.
//
// # Security
//
// The console serves the owner only. Signing in is the unlock (password
// and Secret Key), or a one-time link that phc ui mints with the CLI's
// session (POST /ui/link with the owner's bearer token), bound to that
// session. A signed-in browser holds a random session cookie — HttpOnly,
// SameSite=Strict, never an API token — which the server keeps only as its
// SHA-256 hash beside the owner principal; locking the vault ends every
// session. Every state-changing form carries a per-session CSRF token,
// compared in constant time, on top of the local API's Host, Origin and
// Sec-Fetch-Site checks, which the daemon applies to /ui as to every
// route. Every page is sent with a strict Content-Security-Policy: the
// console runs no script at all, loads nothing from elsewhere and may not
// be framed; html/template escapes every untrusted string.
package webui
