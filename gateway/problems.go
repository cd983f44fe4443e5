package gateway

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/portico-gateway/portico/gateway/problem"
)

// problemsPath is where the pages of the problem types live: every
// problem's type URI (problem.TypeURI) is problemsPath/<slug>, and
// problemsPath itself lists them.
const problemsPath = "/problems"

// problemPageCache is how long a client or cache may keep a problem type's
// page: the pages change only with a new release.
const problemPageCache = "public, max-age=86400"

// problemPages are the rendered pages of the problem types, built once by
// renderProblemPages: the index and one page per slug. Their links are
// relative (the index's "problems/<slug>", a page's "../problems"), so
// they still work behind an ingress that serves the edge under a prefix.
type problemPages struct {
	index  []byte
	bySlug map[string][]byte
}

var (
	problemPageHTML = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{{.Code}}: {{.Title}}</title></head>
<body>
<h1>{{.Title}}</h1>
<p>Code <code>{{.Code}}</code>, HTTP {{.Status}}. A problem of this type carries <code>"code": "{{.Code}}"</code> and a <code>type</code> ending in <code>/{{.Slug}}</code> (<code>/problems/{{.Slug}}</code> unless the gateway's problems.type_base says otherwise).</p>
<p>{{.Doc}}</p>
<p>{{if .RetryAfter}}These answers carry a Retry-After header (and retryAfter in the body): the seconds to wait before a retry.{{else}}These answers carry no Retry-After header.{{end}}</p>
<p><a href="../problems">All problem types</a></p>
</body>
</html>
`))
	problemIndexHTML = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Problem types</title></head>
<body>
<h1>Problem types</h1>
<p>Every error answer is application/problem+json (RFC 9457). Its type is one of these pages; its code is the identifier to branch on.</p>
<table>
<thead><tr><th>code</th><th>HTTP</th><th>title</th><th>Retry-After</th></tr></thead>
<tbody>
{{range .}}<tr><td><a href="problems/{{.Slug}}">{{.Code}}</a></td><td>{{.Status}}</td><td>{{.Title}}</td><td>{{if .RetryAfter}}yes{{else}}no{{end}}</td></tr>
{{end}}</tbody>
</table>
</body>
</html>
`))
)

// renderProblemPages renders the page of every problem.Pages entry and the
// index.
func renderProblemPages() (problemPages, error) {
	pages := problem.Pages()
	out := problemPages{bySlug: make(map[string][]byte, len(pages))}
	var b bytes.Buffer
	for _, p := range pages {
		b.Reset()
		if err := problemPageHTML.Execute(&b, p); err != nil {
			return problemPages{}, err
		}
		out.bySlug[p.Slug] = bytes.Clone(b.Bytes())
	}
	b.Reset()
	if err := problemIndexHTML.Execute(&b, pages); err != nil {
		return problemPages{}, err
	}
	out.index = bytes.Clone(b.Bytes())
	return out, nil
}

// isProblemsPath reports whether path is the index or a page of a problem
// type, and returns its metrics route: one label for every page, so no
// request can add a series.
func isProblemsPath(path string) (route string, ok bool) {
	return prefixRoute(path, problemsPath, "{slug}")
}

// prefixRoute reports whether path is base or below base/, and returns
// its metrics route: base itself, or base/param for everything below it.
func prefixRoute(path, base, param string) (route string, ok bool) {
	switch {
	case path == base:
		return base, true
	case strings.HasPrefix(path, base+"/"):
		return base + "/" + param, true
	}
	return "", false
}

// serveProblemPage answers the index or a problem type's page as HTML that
// caches may keep; an unknown slug is a 404 problem.
func (s *Server) serveProblemPage(w http.ResponseWriter, r *http.Request) {
	page := s.problems.index
	if slug, ok := strings.CutPrefix(r.URL.Path, problemsPath+"/"); ok {
		if page, ok = s.problems.bySlug[slug]; !ok {
			s.writeProblem(w, r, problem.New(problem.CodeNotFound,
				"No problem type is at "+r.URL.EscapedPath()+"; "+problemsPath+" lists them."))
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(page)))
	h.Set("Cache-Control", problemPageCache)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(page)
}
