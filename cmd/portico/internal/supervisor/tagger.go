package supervisor

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"
	"time"
)

// maxLine bounds one line of a child's output: the bytes past it are
// dropped (and counted), never split into a record of their own.
const maxLine = 64 << 10

// tagger turns one of a child's output streams into whole JSON records, one
// per line the child wrote:
//
//   - a JSON object with time, level and msg passes through unchanged;
//   - any other line gets them: a plain line becomes its msg, a JSON object
//     keeps the fields it has;
//   - a line longer than maxLine keeps its first maxLine bytes (for a JSON
//     object, every field that is whole in them) and is marked with
//     truncatedBytes, the number of bytes dropped.
//
// Records it makes carry service (the child's name) and the stream's level.
type tagger struct {
	name  string
	level slog.Level // of a line that names none: INFO on stdout, ERROR on stderr
	out   *lockedWriter
	mu    sync.Mutex
	buf   []byte
	drop  int    // bytes of the current line past maxLine
	last  string // the last line, cut to maxLastLine bytes
}

// maxLastLine bounds what lastLine keeps.
const maxLastLine = 512

// lastLine returns the last whole line written (after Flush, also a
// trailing partial one), or "".
func (t *tagger) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

func newTagger(name string, level slog.Level, out *lockedWriter) *tagger {
	return &tagger{name: name, level: level, out: out}
}

func (t *tagger) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		keep := min(len(part), maxLine-len(t.buf))
		t.buf = append(t.buf, part[:keep]...)
		t.drop += len(part) - keep
		if i < 0 {
			break
		}
		t.emit()
		b = b[i+1:]
	}
	return n, nil
}

// Flush writes a trailing partial line, if any.
func (t *tagger) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emit()
}

// emit writes the buffered line as one record and empties the buffer.
func (t *tagger) emit() {
	line, drop := bytes.TrimRight(t.buf, "\r"), t.drop
	defer func() { t.buf, t.drop = t.buf[:0], 0 }()
	if len(line) == 0 && drop == 0 {
		return
	}
	t.last = string(line[:min(len(line), maxLastLine)])
	var rec []byte
	if drop == 0 && isRecord(line) {
		rec = append(append(make([]byte, 0, len(line)+1), line...), '\n')
	} else {
		rec = t.wrap(line, drop)
	}
	_, _ = t.out.Write(rec)
}

// isRecord reports whether line is a JSON object with time, level and msg.
func isRecord(line []byte) bool {
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	var r struct{ Time, Level, Msg json.RawMessage }
	return json.Unmarshal(line, &r) == nil && r.Time != nil && r.Level != nil && r.Msg != nil
}

// wrap makes line a record: a JSON object keeps its whole fields (a cut one
// only those whole before the cut), anything else becomes msg; time, level,
// msg and service come first, from the line or made up.
func (t *tagger) wrap(line []byte, drop int) []byte {
	var fields []field
	if drop > 0 || json.Valid(line) {
		fields = objectFields(line, drop > 0)
	}
	if fields == nil {
		text, _ := json.Marshal(string(line))
		fields = []field{{"msg", text}}
	}
	msg := "(no msg)"
	if drop > 0 {
		msg = "log line truncated"
	}
	head := []field{
		{"time", quote(time.Now().Format(time.RFC3339Nano))},
		{"level", quote(t.level.String())},
		{"msg", quote(msg)},
		{"service", quote(t.name)},
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, h := range head {
		if v, ok := lookup(fields, h.key); ok {
			h.val = v
		}
		writeField(&b, h)
	}
	for _, f := range fields {
		if _, ok := lookup(head, f.key); !ok {
			writeField(&b, f)
		}
	}
	if drop > 0 {
		writeField(&b, field{"truncatedBytes", json.RawMessage(itoa(drop))})
	}
	b.WriteString("}\n")
	return b.Bytes()
}

type field struct {
	key string
	val json.RawMessage
}

// objectFields returns the members of the JSON object line begins with that
// are whole, in order, or nil if line does not begin with one. The first
// member cut short and everything after it are left out. If line was cut,
// a member whose value ends exactly at the cut counts as cut short: a
// number or literal there may have had more digits or letters (the decoder
// takes the end of input as the end of a number); other values there are
// dropped too, so one rule covers every kind.
func objectFields(line []byte, cut bool) []field {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	fields := []field{}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil || cut && dec.InputOffset() == int64(len(line)) {
			break
		}
		if _, dup := lookup(fields, key); !dup {
			fields = append(fields, field{key, v})
		}
	}
	return fields
}

func lookup(fs []field, key string) (json.RawMessage, bool) {
	for _, f := range fs {
		if f.key == key {
			return f.val, true
		}
	}
	return nil, false
}

func writeField(b *bytes.Buffer, f field) {
	if b.Len() > 1 {
		b.WriteByte(',')
	}
	b.Write(quote(f.key))
	b.WriteByte(':')
	b.Write(f.val)
}

func quote(s string) json.RawMessage { q, _ := json.Marshal(s); return q }

func itoa(n int) []byte { q, _ := json.Marshal(n); return q }
