package problem

import "net/http"

// Page is what the page of one problem type (its type URI) tells a client.
type Page struct {
	Code   string // e.g. UPSTREAM_TIMEOUT
	Slug   string // the type URI's last segment, e.g. upstream-timeout
	Title  string // the title of problems with this code
	Status int    // the HTTP status of problems with this code
	// Doc says what the code means, what to do and whether to retry: the
	// doc option of its portico.type.v1.Reason value.
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
	e := catalogue[code]
	p := Page{Code: code, Slug: Slug(code), Status: e.status(), Doc: e.doc}
	p.Title = title(&Problem{Code: code, Status: p.Status}, table[e.code])
	p.RetryAfter = p.Status == http.StatusTooManyRequests ||
		p.Status == http.StatusServiceUnavailable && code != CodeMessageTooLarge
	return p
}
