package problem

import (
	"net/http"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Page is what the page of one problem type (its type URI) tells a client.
type Page struct {
	Code   string // e.g. UPSTREAM_TIMEOUT
	Slug   string // the type URI's last segment, e.g. upstream-timeout
	Title  string // the title of problems with this code
	Status int    // the HTTP status of problems with this code
	// Doc says what the code means, what to do and whether to retry: the
	// catalogue's text for the edge's codes, the Reason's doc option for
	// the services' reasons.
	Doc string
	// RetryAfter is true when problems with this code carry Retry-After
	// (every 429, and every 503 but MESSAGE_TOO_LARGE).
	RetryAfter bool
}

// Pages returns the page of every code in Codes, in the same order.
func Pages() []Page {
	codes := Codes()
	out := make([]Page, 0, len(codes))
	for _, c := range codes {
		out = append(out, pageOf(c))
	}
	return out
}

func pageOf(code string) Page {
	p := Page{Code: code, Slug: Slug(code)}
	if e, ok := catalogue[code]; ok {
		p.Title, p.Status, p.Doc = e.title, e.status, e.doc
	} else if r, ok := rpcerr.ParseReason(code); ok {
		p.Status, p.Doc = reasonStatus(r), rpcerr.ReasonDoc(r)
		p.Title = title(&Problem{Code: code, Status: p.Status}, table[rpcerr.ReasonCode(r)])
	}
	p.RetryAfter = p.Status == http.StatusTooManyRequests ||
		p.Status == http.StatusServiceUnavailable && code != CodeMessageTooLarge
	return p
}

// reasonStatus is the HTTP status the edge answers for reason r: its
// http_status option, else the status table's for its gRPC code.
func reasonStatus(r typev1.Reason) int {
	if s := rpcerr.ReasonHTTPStatus(r); s != 0 {
		return s
	}
	return table[rpcerr.ReasonCode(r)].status
}
