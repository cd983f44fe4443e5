package problem

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ContentType is the media type of every problem body (RFC 9457 section 3).
const ContentType = "application/problem+json"

// TypeBase prefixes every problem type URI: a path-absolute reference that
// a client resolves against the request URI, so it names the edge's own
// page of the problem type (package doc: The type URI).
const TypeBase = "/problems/"

// FieldViolation is one bad field of a request.
type FieldViolation struct {
	// Field is the field path in the request's JSON names, e.g.
	// "lines[0].quantity".
	Field string `json:"field"`
	// Pointer is the same location as an RFC 6901 JSON Pointer in URI
	// fragment form, e.g. "#/lines/0/quantity", as in RFC 9457's example.
	Pointer string `json:"pointer,omitempty"`
	// Detail says what is wrong with the field.
	Detail string `json:"detail"`
}

// Problem is one RFC 9457 problem details object with Portico's extension
// members. The zero value is not useful; build one with New or FromStatus.
type Problem struct {
	Type       string           `json:"type"`
	Title      string           `json:"title"`
	Status     int              `json:"status"`
	Detail     string           `json:"detail,omitempty"`
	Instance   string           `json:"instance,omitempty"`
	Code       string           `json:"code"`
	TraceID    string           `json:"traceId,omitempty"`
	Errors     []FieldViolation `json:"errors,omitempty"`
	Hop        string           `json:"hop,omitempty"`
	Upstream   string           `json:"upstream,omitempty"`
	RetryAfter int              `json:"retryAfter,omitempty"`
	// Layer names the rate limit that refused a 429 (caller, a route
	// group's name, global, failed_auth) or banned the caller (ban).
	Layer string `json:"layer,omitempty"`

	// Allow lists the methods of a 405 answer (the Allow header).
	Allow []string `json:"-"`
	// Challenge is the WWW-Authenticate header of a 401 answer.
	Challenge string `json:"-"`
	// ETag is the resource's current entity tag on a 412 ETAG_MISMATCH
	// from a service (its ErrorInfo's etag), sent as the ETag header so a
	// client can retry without reading the resource again.
	ETag string `json:"-"`
}

// New returns the problem for one of the edge's own codes (those with a
// title), with detail. Any other code becomes a 500.
func New(code, detail string) *Problem {
	e := catalogue[code]
	if e.title == "" {
		e = catalogue[CodeInternal]
	}
	return build(code, e.status(), e.title, detail)
}

func build(code string, status int, title, detail string) *Problem {
	return &Problem{
		Type:   TypeURI(code),
		Title:  title,
		Status: status,
		Detail: detail,
		Code:   code,
	}
}

// Rebase moves p's type under base (an absolute URI ending in "/", the
// edge's problems.type_base): base and Slug(p.Code) where it was TypeBase
// and the slug. An empty base, or TypeBase itself, leaves the type as it is.
func (p *Problem) Rebase(base string) {
	if base != "" && base != TypeBase {
		p.Type = base + strings.TrimPrefix(p.Type, TypeBase)
	}
}

// TypeURI returns the problem type URI of code: TypeBase and Slug(code).
func TypeURI(code string) string {
	return TypeBase + Slug(code)
}

// Slug returns code in lower kebab case, the last segment of its type URI
// (UPSTREAM_TIMEOUT -> upstream-timeout).
func Slug(code string) string {
	return strings.ToLower(strings.ReplaceAll(code, "_", "-"))
}

// Write sends p as the response: Content-Type application/problem+json,
// Cache-Control no-store, Retry-After, Allow, WWW-Authenticate and ETag when set,
// then the status and the JSON body.
func (p *Problem) Write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-store")
	h.Del("Content-Length")
	if p.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	if len(p.Allow) > 0 {
		h.Set("Allow", strings.Join(p.Allow, ", "))
	}
	if p.Challenge != "" {
		h.Set("WWW-Authenticate", p.Challenge)
	}
	if p.ETag != "" {
		h.Set("ETag", `"`+p.ETag+`"`)
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(p.JSON())
}

// Bounds of what a problem body echoes: a field name, pointer or detail
// may quote what the client sent (an unknown key, a path), so each is cut at
// MaxEchoBytes and at most MaxErrors violations are listed, and no request
// can make its own error answer larger than a few tens of KiB.
const (
	MaxEchoBytes = 1 << 10
	MaxErrors    = 50
)

// JSON returns the body Write sends, newline terminated, with the members
// that may echo client input bounded (MaxEchoBytes, MaxErrors).
func (p *Problem) JSON() []byte {
	b := *p
	b.Detail, b.Instance = cut(b.Detail), cut(b.Instance)
	b.Errors = make([]FieldViolation, 0, min(len(p.Errors), MaxErrors))
	for _, v := range p.Errors[:min(len(p.Errors), MaxErrors)] {
		b.Errors = append(b.Errors, FieldViolation{Field: cut(v.Field), Pointer: cut(v.Pointer), Detail: cut(v.Detail)})
	}
	if len(b.Errors) == 0 {
		b.Errors = nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)               // details quote "<token>"; this is not HTML
	if err := enc.Encode(&b); err != nil { // only strings and ints: cannot happen
		return []byte(`{"type":"` + TypeURI(CodeInternal) + `","title":"Internal error","status":500,"code":"INTERNAL"}` + "\n")
	}
	return buf.Bytes()
}

// cut returns s, or its first MaxEchoBytes bytes (whole UTF-8 characters)
// followed by "…" when it is longer.
func cut(s string) string {
	if len(s) <= MaxEchoBytes {
		return s
	}
	n := MaxEchoBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
