package gateway

import (
	"net/http"

	"github.com/portico-gateway/portico/gateway/canned"
)

// refusePreface answers the HTTP/2 cleartext connection preface ("PRI *
// HTTP/2.0", RFC 9113 §3.4) before h sees it, as the edge answers any
// other HTTP version than 1.x (malformed.go): the 505 problem, counted
// and logged, and the connection closed. net/http hands the preface to
// the handler (so that an h2c handler may take the connection over); the
// edge serves HTTP/2 over TLS only (ALPN h2), and its router would answer
// 404.
func (s *Server) refusePreface(h http.Handler, admin bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "PRI" || r.RequestURI != "*" || r.ProtoMajor != 2 {
			h.ServeHTTP(w, r)
			return
		}
		answer := s.answerMalformed(canned.Answer{Status: http.StatusHTTPVersionNotSupported}, admin, r.RemoteAddr)
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil { // not net/http's HTTP/1 writer (a test's recorder)
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusHTTPVersionNotSupported)
			return
		}
		defer c.Close()
		_, _ = c.Write(answer)
	})
}
