// Package console is the admin listener's web console: one HTML page, a
// few ES modules and one stylesheet, embedded in the binary (no build
// step, no JavaScript toolchain, nothing from outside hosts).
//
// The files are a sign-in shell with no data in them: a browser's
// navigation to "/" cannot carry an Authorization header, and the token
// must not travel in a URL or in a cookie (a cookie would give the
// browser ambient authority, open to cross-site requests). So the files
// are served to anyone, and the page's script keeps the admin token the
// operator types in sessionStorage and sends it as "Authorization:
// Bearer" on every fetch of the admin API, whose endpoints answer the
// admin role only. Every change (reload, rollback) is a POST that needs
// that header, so a cross-site form or image cannot make one (no CSRF).
//
// Every answer carries Headers: a Content-Security-Policy that allows
// scripts, styles and fetches from the admin listener alone and no inline
// script or style, nosniff, no framing and no referrer.
//
// The page polls the admin API every two seconds rather than holding a
// Server-Sent Events stream: EventSource cannot send an Authorization
// header, and a poll is one short request, which the admin listener's
// fixed read timeout never cuts.
package console
