package gateway

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"sync"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/etag"
	"github.com/portico-gateway/portico/gateway/problem"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Conditional requests (RFC 9110 section 13). The per-RPC facts come from
// the descriptors, by AIP-154's naming, so a service loaded at run time
// gets the same treatment:
//
//   - A GET answer carries ETag: the strong "<etag>" of the response
//     message's top-level string field etag (Item, Order, Payment), else
//     the weak W/"<hash>" of the response message (lists, reservations):
//     a hash of the message rather than of the bytes on the wire, so weak.
//     If-Match on a GET is judged at the edge by strong comparison (412
//     when nothing matches); then If-None-Match by weak comparison (304,
//     no body, the ETag kept).
//   - A route whose request has a top-level string field etag (UpdateItem,
//     CancelOrder, RefundPayment) takes If-Match: its one strong tag goes to
//     the service as the "if-match" metadata, and the service answers
//     FAILED_PRECONDITION ETAG_MISMATCH, 412, when the resource changed.
//     "*" sends no condition (the service answers 404 for a missing
//     resource). Weak tags never match (strong comparison, section
//     13.1.1), so a list of weak tags only is 412 at once; several strong
//     tags are 400, since the service compares one.
//   - If-Match on any other non-GET route, and If-None-Match on any
//     non-GET route, are 400: the edge cannot evaluate them there and
//     will not pretend it did. So are both on a server-streaming route
//     (:watch, :export): a stream has no one ETag.
//
// Either header malformed, longer than etag.MaxBytes or listing more than
// etag.MaxTags tags is 400 INVALID_CONDITIONAL_HEADER naming the header.

// conditions are one request's parsed precondition fields.
type conditions struct {
	ifMatch, ifNoneMatch etag.Condition
	forward              string // the If-Match tag sent as metadata
	neverMatch           bool   // If-Match had no tag a resource could have: forward is neverMatches
}

// errNotModified and errPreconditionFailed end a GET from forwardOption:
// handleError answers them 304 and 412.
var (
	errNotModified        = errors.New("gateway: not modified")
	errPreconditionFailed = errors.New("gateway: precondition failed")
)

// preconditions parses and checks the request's If-Match and If-None-Match
// for ep.
func preconditions(r *http.Request, ep *endpoint) (conditions, *problem.Problem) {
	var c conditions
	var err error
	if c.ifMatch, err = etag.Parse(r.Header.Values("If-Match")); err != nil {
		return c, badCondition("If-Match", err)
	}
	if c.ifNoneMatch, err = etag.Parse(r.Header.Values("If-None-Match")); err != nil {
		return c, badCondition("If-None-Match", err)
	}
	if ep.Method == http.MethodGet {
		return c, nil
	}
	if c.ifNoneMatch.Present {
		return c, problem.New(problem.CodeInvalidConditional, "If-None-Match is honoured on GET only; drop it from this "+ep.Method+".")
	}
	if !c.ifMatch.Present || c.ifMatch.Any && ep.etagIn {
		return c, nil
	}
	if !ep.etagIn {
		return c, problem.New(problem.CodeInvalidConditional, "This operation does not take If-Match: it has no etag to compare.")
	}
	var strong []string
	for _, t := range c.ifMatch.Tags {
		if !t.Weak && callmeta.ValidValue(t.Opaque, etag.MaxBytes) {
			strong = append(strong, t.Opaque)
		}
	}
	switch len(strong) {
	case 0:
		// Weak tags, or ones no service ever sends: none can match. The
		// service still decides first whether the caller may change the
		// resource and whether it exists (RFC 9110 section 13.2.1: a 403
		// or 404 comes before a 412), so it gets a tag no resource has.
		c.forward, c.neverMatch = neverMatches, true
		return c, nil
	case 1:
		c.forward = strong[0]
		return c, nil
	}
	return c, problem.New(problem.CodeInvalidConditional, "Send one entity tag in If-Match on this operation: the service compares one.")
}

// streamPreconditions refuses If-Match and If-None-Match on a
// server-streaming route: a stream has no one entity tag to compare, and
// the edge will not pretend it checked (the same rule as If-None-Match
// on a non-GET).
func streamPreconditions(r *http.Request) *problem.Problem {
	for _, h := range []string{"If-Match", "If-None-Match"} {
		if len(r.Header.Values(h)) > 0 {
			return problem.New(problem.CodeInvalidConditional, h+" is not honoured on streams: a stream has no single entity tag; drop it from this request.")
		}
	}
	return nil
}

func badCondition(header string, err error) *problem.Problem {
	detail := header + ` must be "*" or a comma-separated list of entity tags such as "Xq3v0p8lJ1cWm2Rk" or W/"Xq3v0p8lJ1cWm2Rk".`
	switch {
	case errors.Is(err, etag.ErrTooLong):
		detail = header + " is longer than the gateway accepts (2048 bytes)."
	case errors.Is(err, etag.ErrTooMany):
		detail = header + " lists more entity tags than the gateway accepts (32)."
	}
	p := problem.New(problem.CodeInvalidConditional, detail)
	p.Errors = []problem.FieldViolation{{Field: header, Detail: err.Error()}}
	return p
}

// neverMatches is the If-Match tag forwarded for a list that can match no
// resource: not base64url, so never a service's tag.
const neverMatches = "W/"

// neverMatchDetail is the 412's detail when the service refused
// neverMatches.
const neverMatchDetail = "If-Match lists no strong entity tag the resource could have: a weak tag (W/) never matches If-Match, and a service's tags are printable ASCII. Read the resource again and send its ETag."

// etagMismatch is the edge's own 412: the services' reason, through the
// one status table.
func etagMismatch(detail string) *problem.Problem {
	return problem.FromStatus(status.Convert(rpcerr.Fail("edge.portico.dev", typev1.Reason_REASON_ETAG_MISMATCH, detail)), problem.Facts{})
}

// judge sets the ETag of a GET answer and evaluates the request's
// conditions against it (RFC 9110 section 13.2.2: If-Match, then
// If-None-Match); a non-nil error ends the answer (handleError).
func judge(w http.ResponseWriter, ex *exchange, resp proto.Message) error {
	if ex.ep == nil || ex.ep.Method != http.MethodGet || resp == nil {
		return nil
	}
	return judgeTag(w, ex, tagOf(ex.ep, resp))
}

// judgeTag sets tag as the answer's ETag and evaluates the request's
// conditions against it, as judge does; a stale answer (stale.go) is
// judged on the tag kept with its copy.
func judgeTag(w http.ResponseWriter, ex *exchange, tag etag.Tag) error {
	w.Header().Set("ETag", tag.String())
	switch {
	case ex.cond.ifMatch.Present && !ex.cond.ifMatch.MatchStrong(tag, true):
		return errPreconditionFailed
	case ex.cond.ifNoneMatch.Present && ex.cond.ifNoneMatch.MatchWeak(tag, true):
		return errNotModified
	}
	return nil
}

// tagOf is resp's entity tag: its etag field's, strong, when it has a
// usable one; else the weak hash of the message.
func tagOf(ep *endpoint, resp proto.Message) etag.Tag {
	if fd := ep.etagOut; fd != nil {
		if v := resp.ProtoReflect().Get(fd).String(); v != "" && etag.ValidOpaque(v) {
			return etag.Strong(v)
		}
	}
	return weakTag(resp)
}

// maxPooledTagBuf bounds the marshal buffers weakTag keeps, so one huge
// answer does not pin its buffer in the pool.
const maxPooledTagBuf = 64 << 10

// tagBufs holds weakTag's marshal buffers: the hash needs the bytes only
// until it is taken, so one buffer serves request after request.
var tagBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// weakTag is the weak tag W/"<hash>": the first 16 bytes of SHA-256 of
// resp's deterministic marshal, base64url unpadded (22 characters). It
// marshals into a pooled buffer and encodes on the stack, so the tag's
// string is its only allocation; the bytes hashed are those Marshal
// gives (also when Marshal fails, as a partial hash was the rule before).
func weakTag(resp proto.Message) etag.Tag {
	bp := tagBufs.Get().(*[]byte)
	b, _ := proto.MarshalOptions{Deterministic: true}.MarshalAppend((*bp)[:0], resp)
	sum := sha256.Sum256(b)
	if cap(b) <= maxPooledTagBuf {
		*bp = b[:0]
		tagBufs.Put(bp)
	}
	var enc [22]byte // base64.RawURLEncoding.EncodedLen(16)
	base64.RawURLEncoding.Encode(enc[:], sum[:16])
	return etag.Weak(string(enc[:]))
}

// etagField returns md's top-level string field etag (AIP-154), or nil.
func etagField(md protoreflect.MessageDescriptor) protoreflect.FieldDescriptor {
	if md == nil {
		return nil
	}
	fd := md.Fields().ByName("etag")
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return nil
	}
	return fd
}

// answerCondition writes the 304 or 412 that judge decided, reporting
// whether err was one.
func (s *Server) answerCondition(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case errors.Is(err, errNotModified):
		// RFC 9110 section 15.4.5: no content; ETag and Cache-Control as
		// a 200 would have them.
		w.Header().Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return true
	case errors.Is(err, errPreconditionFailed):
		w.Header().Del("ETag")
		s.writeProblem(w, r, etagMismatch("The resource's current entity tag matches none in If-Match (compared strongly: a weak tag never matches)."))
		return true
	}
	return false
}
