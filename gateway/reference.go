package gateway

import (
	"net/http"
	"strings"

	"github.com/portico-gateway/portico/gateway/apiref"
	"github.com/portico-gateway/portico/gateway/problem"
)

// docsPath is the API reference (package apiref): the page itself, and
// docsPath/<file> the files it loads. Its links are relative ("docs/...",
// "openapi.json", "problems"), so it works behind a path prefix.
const docsPath = "/docs"

// isDocsPath reports whether path is the reference page or one of its
// files, and returns its metrics route: one label for every file, so no
// request can add a series.
func isDocsPath(path string) (route string, ok bool) {
	return prefixRoute(path, docsPath, "{file}")
}

// serveDocs answers the reference page or one of its files (apiref's
// headers: CSP, nosniff, ETag, cache); /docs/ redirects to the page, an
// unknown file is a 404 problem.
func (s *Server) serveDocs(w http.ResponseWriter, r *http.Request) {
	name, sub := strings.CutPrefix(r.URL.Path, docsPath+"/")
	if sub && name == "" {
		// A relative Location (RFC 9110 section 10.2.2), which http.Redirect
		// would make absolute: it keeps a path prefix in front of the edge.
		w.Header().Set("Location", "../docs")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	var f *apiref.File
	if sub {
		var ok bool
		if f, ok = apiref.Lookup(name); !ok {
			s.writeProblem(w, r, problem.New(problem.CodeNotFound,
				"No file of the API reference is at "+r.URL.EscapedPath()+"; the reference is at "+docsPath+"."))
			return
		}
	} else {
		var err error
		if f, err = apiref.Page(); err != nil { // the embedded page is checked by the tests: cannot happen
			s.writeProblem(w, r, problem.New(problem.CodeInternal, "The API reference could not be built."))
			return
		}
	}
	f.Serve(w, r)
}
