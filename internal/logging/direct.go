package logging

import (
	"context"
	"encoding/hex"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/internal/traceid"
)

// Direct writes one record (t, level, msg, attrs) to l the way l's handler
// would write it, byte for byte, without slog's handler machinery: the
// edge's access line is most of its logging CPU, and slog's JSON handler
// spends it on per-record state, a ReplaceAttr call per built-in key and
// encoding/json for every float.
//
// It serves only New's logger, optionally With'ed attributes (no groups)
// and sampled (Sample, Sampler.Logger): the line is sampled, gets the
// trace fields, redacted and capped (MaxValueBytes) exactly as by
// l.Handler().Handle. It reports false, having written nothing, for any
// other logger, a zero time, or an attribute it cannot write identically
// (a group, an Any, a Time, a LogValuer, a float that is not finite); the
// caller then logs through slog. It never checks l's level, as Handle
// does not.
func Direct(ctx context.Context, l *slog.Logger, t time.Time, level slog.Level, msg string, attrs []slog.Attr) bool {
	th, sampler := standard(l.Handler())
	if th.direct == nil || t.IsZero() || t.Year() >= 10000 || t.Year() < 0 {
		return false
	}
	for _, a := range attrs {
		if !directKind(a.Value) {
			return false
		}
	}
	if sampler != nil && !sampler.keepLine(ctx, level, msg, attrs) {
		return true // dropped, as sampleHandler.Handle drops it
	}
	bp := bufPool.Get().(*[]byte)
	b := append((*bp)[:0], `{"time":"`...)
	b = t.Round(0).AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":`...)
	b = appendJSONString(b, level.String())
	b = append(b, `,"msg":`...)
	b = appendJSONString(b, cutLong(nil, slog.String(slog.MessageKey, msg)).Value.String())
	b = append(b, th.direct.prefix...)
	for _, a := range attrs {
		b = appendAttr(b, a)
	}
	b = appendTrace(ctx, b)
	b = append(b, "}\n"...)
	if level < slog.LevelWarn {
		th.direct.w.writeLine(b) // an access line: buffered
	} else {
		_, _ = th.direct.w.Write(b)
	}
	if cap(b) <= maxPooled {
		*bp = b
		bufPool.Put(bp)
	}
	return true
}

// appendTrace appends the trace fields traceHandler adds (traceFields).
// The span context's ids are written as hex straight into b, not made
// strings first: hex digits are never redacted nor cut.
func appendTrace(ctx context.Context, b []byte) []byte {
	sc := trace.SpanContextFromContext(ctx)
	if id := traceid.FromContext(ctx); id != "" {
		b = appendAttr(b, slog.String("traceId", id))
	} else if sc.IsValid() {
		tid := sc.TraceID()
		b = append(b, `,"traceId":"`...)
		b = hex.AppendEncode(b, tid[:])
		b = append(b, '"')
	}
	if sc.IsValid() {
		sid := sc.SpanID()
		b = append(b, `,"spanId":"`...)
		b = hex.AppendEncode(b, sid[:])
		b = append(b, '"')
	}
	return b
}

// maxPooled is the largest buffer put back in bufPool, so that one huge
// record does not pin its buffer (slog's own limit).
const maxPooled = 16 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// standard finds New's traceHandler in h, under at most one sampleHandler.
func standard(h slog.Handler) (traceHandler, *Sampler) {
	switch h := h.(type) {
	case traceHandler:
		return h, nil
	case sampleHandler:
		if th, ok := h.Handler.(traceHandler); ok {
			return th, h.p
		}
	}
	return traceHandler{}, nil
}

// direct is what Direct needs of a traceHandler over New's JSON handler:
// the writer, shared with the JSON handler, and the With'ed attributes
// already encoded.
type direct struct {
	w      *Writer // serialises Direct's writes with the handler's
	prefix []byte  // ,"key":value for each With'ed attribute, in order
}

// with returns d after the With'ed attributes as, or nil (Direct falls
// back to slog) if d is nil or one of as cannot be written directly.
func (d *direct) with(as []slog.Attr) *direct {
	if d == nil {
		return nil
	}
	nd := &direct{w: d.w, prefix: append([]byte(nil), d.prefix...)}
	for _, a := range as {
		if !directKind(a.Value) {
			return nil
		}
		nd.prefix = appendAttr(nd.prefix, a)
	}
	return nd
}

// directKind reports whether Direct writes v as the JSON handler does.
func directKind(v slog.Value) bool {
	switch v.Kind() {
	case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindBool, slog.KindDuration:
		return true
	case slog.KindFloat64:
		f := v.Float64()
		return !math.IsNaN(f) && !math.IsInf(f, 0) // the handler writes an !ERROR string
	}
	return false
}

// appendAttr appends ,"key":value for a (of a directKind) after
// ReplaceAttr (cutLong), as the JSON handler does: with a's key from the
// table (cachedKey), its encoding and secrecy are not worked out again.
func appendAttr(b []byte, a slog.Attr) []byte {
	k := cachedKey(a.Key)
	if k == nil {
		a = cutLong(nil, a)
		b = appendKey(b, a.Key)
		return appendValue(b, a.Value)
	}
	b = append(b, k.json...)
	switch v := a.Value; {
	case k.secret: // whatever its kind, as cutLong
		return appendJSONString(b, Redacted)
	case v.Kind() == slog.KindString: // cutLong's steps after the key's
		s, _ := redactValue(v.String())
		if len(s) > MaxValueBytes {
			s = truncate(s)
		}
		return appendJSONString(b, s)
	default:
		return appendValue(b, v)
	}
}

// appendValue appends v (of a directKind) as the JSON handler does.
func appendValue(b []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindString:
		b = appendJSONString(b, v.String())
	case slog.KindInt64:
		b = strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		b = strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindBool:
		b = strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		b = strconv.AppendInt(b, int64(v.Duration()), 10)
	case slog.KindFloat64:
		b = appendJSONFloat(b, v.Float64())
	}
	return b
}

// appendJSONFloat is encoding/json's float64 encoding (ES6 number to
// string: 'f' unless tiny or huge, exponents unpadded), which the JSON
// handler calls for every float; f is finite.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendJSONString appends s quoted as the JSON handler quotes it:
// encoding/json's escaping without HTML escapes, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// keepLine is sampleHandler.keep for a record of msg and attrs.
func (p *Sampler) keepLine(ctx context.Context, level slog.Level, msg string, attrs []slog.Attr) bool {
	h := sampleHandler{p: p}
	if h.sampled(ctx, level) {
		return true
	}
	if msg != "request" {
		return false
	}
	_, slowMs := p.load()
	for _, a := range attrs {
		if a.Key == "durationMs" {
			return a.Value.Kind() == slog.KindFloat64 && a.Value.Float64() >= slowMs
		}
	}
	return false
}
