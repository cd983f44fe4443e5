package gateway

import (
	"io"
	"net/http"
)

// refusePreface answers the HTTP/2 cleartext connection preface ("PRI *
// HTTP/2.0", RFC 9113 §3.4) before h sees it, as net/http answers any
// other HTTP version than 1.x: 505 in plain text, no X-Trace-Id, and the
// connection closed. net/http hands the preface to the handler (so that
// an h2c handler may take the connection over); the edge serves HTTP/2
// over TLS only (ALPN h2), and its router would answer 404.
func refusePreface(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "PRI" || r.RequestURI != "*" || r.ProtoMajor != 2 {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusHTTPVersionNotSupported)
		_, _ = io.WriteString(w, "505 HTTP Version Not Supported: unsupported protocol version")
	})
}
