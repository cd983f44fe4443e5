// Package console is the admin listener's web console: one HTML page, a
// few ES modules and one stylesheet, embedded in the binary (no build
// step, no JavaScript toolchain, nothing from outside hosts), and the
// sign-in page that stands in for it until the browser has a console
// session.
//
// # Sign-in and sessions
//
// A browser's navigation to "/" cannot carry an Authorization header, and
// the token must not travel in a URL. So "/" answers by the browser's
// console session (cookie Cookie, HttpOnly, SameSite=Strict, Path=/, 8
// hours, Secure on a TLS listener): without a live one it is the sign-in
// page (signin.html with signin.js and the stylesheet, the only files
// Public serves to anyone; no console code and no data), with one the
// console's page, whose modules (console.js, render.js, spark.js) are a
// 401 problem without one. The sign-in script POSTs the token the operator
// types to /admin/session as "Authorization: Bearer"; the edge checks it
// exactly as the admin API does (role admin only), opens a session
// (Sessions: a 256-bit random id, kept hashed; at most 256, one more ends
// the oldest; expired ones swept as sessions are made) and sets the
// cookie. DELETE /admin/session signs out (the console's "Sign out").
//
// A session keeps the Authorization header it was made with, in memory
// only (never logged: Session's String and LogValue leave it out), and
// the edge authenticates it again, against the live config, on every use:
// a token a reload removed, or whose role is no longer admin, ends the
// session at once. A hash could not be checked again by every kind of
// credential (a JWT's signature and expiry need the token itself), and
// the token already sits in the edge's memory as the operator sends it
// on every admin request.
//
// The cookie only lets the browser load the console. The page's script
// keeps the token in sessionStorage (this tab only) and sends it as
// "Authorization: Bearer" on every fetch of the admin API, with
// credentials omitted: the admin API's endpoints answer that header and
// the admin role only, never the cookie. Every change (reload, rollback)
// is a POST that needs the header, so a cross-site form, image or script
// cannot make one (no CSRF), and SameSite=Strict keeps the cookie off any
// cross-site request besides. A tab without the token (the cookie is the
// browser's, the token the tab's) signs out and back in.
//
// Every answer carries Headers: a Content-Security-Policy that allows
// scripts, styles and fetches from the admin listener alone and no inline
// script or style, nosniff, no framing and no referrer. An answer that
// depends on the cookie (the page at "/", the modules, their 401) is
// Cache-Control: no-store with Vary: Cookie; the public files are
// no-cache.
//
// The page polls the admin API every two seconds rather than holding a
// Server-Sent Events stream: EventSource cannot send an Authorization
// header, and a poll is one short request, which the admin listener's
// fixed read timeout never cuts.
package console
