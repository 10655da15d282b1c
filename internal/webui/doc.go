// Package webui is the owner's console: server-rendered pages under /ui
// that the daemon serves from embedded assets, for reviewing proposals,
// deciding requests and apps, granting and revoking, browsing claims,
// personas, summaries and receipts, changing the settings, and drawing
// provenance and the graph as SVG.
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
// session. Either opens a console session under its own unguessable path,
// /ui/s/<random>/, where all its pages are, and sets a random session
// cookie — HttpOnly, SameSite=Strict, never an API token — for that path
// only. Browsers share cookies among all the ports of a host, so a cookie
// for /ui would reach any other local server whose page the browser loads
// from /ui/…; one for the session's path reaches only those who know the
// path, and nothing shows it to a request without the session: /ui is the
// sign-in page, which never redirects, and a request for a session path
// without that session's cookie is sent to it. The server keeps the
// cookie only as its SHA-256 hash, beside the path and the owner
// principal. A
// request may carry several cookies of the name (another local server can
// set its own, even for a more specific path, which the browser sends
// first): only one that is the named session's counts and the others are
// ignored, so a planted cookie neither signs anyone in nor traps the
// console; the sign-in form's anti-CSRF cookie is read the same way.
// Locking the vault ends every session. Every state-changing form carries
// a per-session CSRF token, compared in constant time, on top of the local
// API's Host, Origin and Sec-Fetch-Site checks, which the daemon applies
// to /ui as to every route. Every page is sent with a strict
// Content-Security-Policy and Referrer-Policy same-origin: the console
// runs no script at all, loads nothing from elsewhere, never names its
// path to another origin and may not be framed; html/template escapes
// every untrusted string.
package webui
