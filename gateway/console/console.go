package console

import (
	"embed"
	"net/http"
	"path"
	"slices"
	"strconv"
)

//go:embed static
var static embed.FS

// CSP is the console's Content-Security-Policy: everything from the admin
// listener's own origin only, no inline script or style, no plugins, no
// form posts anywhere (the script signs in with fetch), no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// files maps each path the console serves to its embedded file: "/" is
// the console's page, which only a signed-in browser gets (signInPage is
// what "/" answers otherwise).
var files = map[string]string{
	"/":                    "static/index.html",
	"/console/console.js":  "static/console.js",
	"/console/render.js":   "static/render.js",
	"/console/spark.js":    "static/spark.js",
	"/console/console.css": "static/console.css",
	"/console/signin.js":   "static/signin.js",
}

// public are the paths served without a session: the sign-in page's own
// script and the stylesheet it shares with the console (plain styling,
// no data and no code).
var public = map[string]bool{"/console/signin.js": true, "/console/console.css": true}

// signInPage is the page "/" answers without a session.
const signInPage = "static/signin.html"

var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// Public reports whether path is served to anyone: the sign-in page's
// script and the stylesheet. The console's page and its modules need a
// session (the caller checks it, Serve does not).
func Public(path string) bool { return public[path] }

// Paths lists the URL paths the console serves, sorted.
func Paths() []string {
	out := make([]string, 0, len(files))
	for p := range files {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Headers sets the security headers every console and admin API answer
// carries.
func Headers(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// Serve answers GET or HEAD of one of Paths with its file; any other path
// is the caller's to refuse (it answers 404 plain). A file that needs a
// session is marked Cache-Control: no-store and Vary: Cookie; a public
// one no-cache (revalidated, never used stale after an upgrade).
func Serve(w http.ResponseWriter, r *http.Request) {
	name, ok := files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	serveFile(w, r, name, !public[r.URL.Path])
}

// ServeSignIn answers GET or HEAD of "/" without a session: the sign-in
// page (no console code, no data), no-store and Vary: Cookie, since the
// same URL answers the console with one.
func ServeSignIn(w http.ResponseWriter, r *http.Request) { serveFile(w, r, signInPage, true) }

// SessionBound marks an answer that depends on the session cookie: never
// stored, and keyed on the cookie by any cache.
func SessionBound(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Cookie")
}

func serveFile(w http.ResponseWriter, r *http.Request, name string, bound bool) {
	b, err := static.ReadFile(name)
	if err != nil { // embedded: cannot happen
		http.Error(w, "console file missing", http.StatusInternalServerError)
		return
	}
	Headers(w.Header())
	w.Header().Set("Content-Type", types[path.Ext(name)])
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if bound {
		SessionBound(w.Header())
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
