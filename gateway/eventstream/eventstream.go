package eventstream

import (
	"bytes"
	"strconv"
	"strings"
)

// Framing is how messages are written: NDJSON or SSE.
type Framing int

// The framings.
const (
	NDJSON Framing = iota // application/x-ndjson
	SSE                   // text/event-stream
)

// Media types of the framings.
const (
	MediaNDJSON = "application/x-ndjson"
	MediaSSE    = "text/event-stream"
)

// ContentType is the framing's Content-Type.
func (f Framing) ContentType() string {
	if f == SSE {
		return MediaSSE + "; charset=utf-8"
	}
	return MediaNDJSON
}

// String names the framing for logs and metrics: "ndjson" or "sse".
func (f Framing) String() string {
	if f == SSE {
		return "sse"
	}
	return "ndjson"
}

// AppendMessage appends one message frame; msg is compact JSON.
func (f Framing) AppendMessage(dst, msg []byte) []byte {
	if f == SSE {
		return appendData(dst, "", msg)
	}
	dst = append(dst, `{"result":`...)
	dst = append(dst, msg...)
	return append(dst, "}\n"...)
}

// AppendError appends the terminal error frame; problem is the problem
// details JSON (RFC 9457).
func (f Framing) AppendError(dst, problem []byte) []byte {
	if f == SSE {
		return appendData(dst, "error", problem)
	}
	dst = append(dst, `{"error":`...)
	dst = append(dst, problem...)
	return append(dst, "}\n"...)
}

// AppendEnd appends the frame of a clean end: SSE's "event: end"; nothing
// for NDJSON, whose clean end is the stream closing.
func (f Framing) AppendEnd(dst []byte) []byte {
	if f == SSE {
		return appendData(dst, "end", []byte("{}"))
	}
	return dst
}

// AppendHeartbeat appends a comment that keeps an idle SSE connection
// open through proxies; nothing for NDJSON.
func (f Framing) AppendHeartbeat(dst []byte) []byte {
	if f == SSE {
		return append(dst, ": keep-alive\n\n"...)
	}
	return dst
}

// appendData writes one SSE event. JSON never needs more than one data
// line, but a newline in data would end the field, so data is split on
// newlines into data lines, which the client joins again.
func appendData(dst []byte, event string, data []byte) []byte {
	if event != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, event...)
		dst = append(dst, '\n')
	}
	for {
		line, rest, more := bytes.Cut(data, []byte("\n"))
		dst = append(dst, "data: "...)
		dst = append(dst, bytes.TrimSuffix(line, []byte("\r"))...)
		dst = append(dst, '\n')
		if !more {
			return append(dst, '\n')
		}
		data = rest
	}
}

// maxRanges bounds the media ranges Negotiate reads: Accept is a client's
// list, and no sensible one is longer.
const maxRanges = 32

// Negotiate picks the framing the Accept values prefer (RFC 9110 section
// 12.5.1): the supported type with the highest quality, a specific type
// winning over a range of the same quality, NDJSON on a tie. No Accept
// header, or an empty one, is NDJSON. ok is false when neither framing is
// acceptable (a 406); ranges past the first 32 are ignored.
func Negotiate(accept []string) (_ Framing, ok bool) {
	var qn, qs, sn, ss int // quality (0-1000) and specificity per framing
	qn, qs = -1, -1
	n, seen := 0, false
	for _, v := range accept {
		for r := range strings.SplitSeq(v, ",") {
			if n++; n > maxRanges {
				break
			}
			mt, q, valid := parseRange(r)
			if !valid {
				continue
			}
			seen = true
			if spec, hit := matches(mt, MediaNDJSON); hit && (spec > sn || spec == sn && qn < 0) {
				qn, sn = q, spec
			}
			if spec, hit := matches(mt, MediaSSE); hit && (spec > ss || spec == ss && qs < 0) {
				qs, ss = q, spec
			}
		}
	}
	switch {
	case !seen:
		return NDJSON, true
	case qn <= 0 && qs <= 0:
		return NDJSON, false
	case qs > qn:
		return SSE, true
	}
	return NDJSON, true
}

// Accepts reports whether the Accept values allow the content type ct (a
// raw stream's, such as an export's text/csv; charset=utf-8): its media
// type matched by the most specific range, whose quality is not 0 (RFC
// 9110 section 12.5.1). No Accept header, or one with no valid range,
// allows anything; ranges past the first 32 are ignored.
func Accepts(accept []string, ct string) bool {
	typ, _, _ := strings.Cut(ct, ";")
	typ = strings.ToLower(strings.TrimSpace(typ))
	q, spec := -1, 0
	n, seen := 0, false
	for _, v := range accept {
		for r := range strings.SplitSeq(v, ",") {
			if n++; n > maxRanges {
				break
			}
			mt, rq, valid := parseRange(r)
			if !valid {
				continue
			}
			seen = true
			if sp, hit := matches(mt, typ); hit && (sp > spec || sp == spec && q < 0) {
				q, spec = rq, sp
			}
		}
	}
	return !seen || q > 0
}

// matches reports whether the media range mt covers typ, and how
// specifically: 3 exact, 2 type/*, 1 */*.
func matches(mt, typ string) (int, bool) {
	switch {
	case mt == typ:
		return 3, true
	case mt == "*/*":
		return 1, true
	case strings.HasSuffix(mt, "/*") && strings.HasPrefix(typ, mt[:len(mt)-1]):
		return 2, true
	}
	return 0, false
}

// parseRange reads one media range: its lower-cased type and its quality
// in thousandths (1000 without q). A malformed range is skipped.
func parseRange(r string) (string, int, bool) {
	params := strings.Split(r, ";")
	mt := strings.ToLower(strings.TrimSpace(params[0]))
	typ, sub, found := strings.Cut(mt, "/")
	if !found || typ == "" || sub == "" || typ == "*" && sub != "*" {
		return "", 0, false
	}
	q := 1000
	for _, p := range params[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || f > 1 {
			return "", 0, false
		}
		q = int(f*1000 + 0.5)
	}
	return mt, q, true
}
