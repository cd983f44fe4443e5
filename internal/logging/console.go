package logging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Console returns a writer that renders each JSON record written to it as
// one line for a person at a terminal, and writes that to w:
//
//	07:41:02.015 INFO  inventory  serving  addr=127.0.0.1:43101
//
// time (local, to the millisecond), level, service and msg first, then the
// record's other fields in their order, as key=value; a string is quoted
// only when it must be (empty, or holding a space, '"', '=' or a control
// character); an object or array stays compact JSON. A line that is not a
// JSON object passes unchanged. Records are whole lines: a write may hold
// several, or part of one (kept until its newline). What a record holds
// is already redacted: Console only changes its shape. Safe for
// concurrent use.
func Console(w io.Writer) io.Writer { return &console{w: w} }

type console struct {
	mu      sync.Mutex
	w       io.Writer
	partial []byte
}

func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	var out []byte
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.partial = append(c.partial, p...)
			break
		}
		line := p[:i]
		if len(c.partial) > 0 {
			line = append(c.partial, line...)
			c.partial = c.partial[:0]
		}
		out = append(consoleLine(out, line), '\n')
		p = p[i+1:]
	}
	if len(out) == 0 {
		return n, nil
	}
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// consoleLine appends line, rendered, to dst.
func consoleLine(dst, line []byte) []byte {
	fields, ok := orderedFields(line)
	if !ok {
		return append(dst, line...)
	}
	head := map[string]string{}
	for _, k := range []string{"time", "level", "service", "msg"} {
		if v, ok := fields.take(k); ok {
			head[k] = plain(v)
		}
	}
	ts := head["time"]
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		ts = t.Local().Format("15:04:05.000")
	}
	dst = fmt.Appendf(dst, "%s %-5s %-9s %s", ts, head["level"], head["service"], head["msg"])
	for _, f := range fields {
		dst = append(dst, ' ')
		dst = append(dst, f.key...)
		dst = append(dst, '=')
		dst = append(dst, consoleValue(f.val)...)
	}
	return dst
}

// plain is a JSON value as text: a string unquoted, anything else as is.
func plain(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// consoleValue renders one field's value.
func consoleValue(v json.RawMessage) string {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return string(v)
	}
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return r == ' ' || r == '"' || r == '=' || unicode.IsControl(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

type rawField struct {
	key string
	val json.RawMessage
}

type rawFields []rawField

// take removes the field named key and returns its value.
func (fs *rawFields) take(key string) (json.RawMessage, bool) {
	for i, f := range *fs {
		if f.key == key {
			*fs = append((*fs)[:i], (*fs)[i+1:]...)
			return f.val, true
		}
	}
	return nil, false
}

// orderedFields returns the members of the JSON object line, in order; ok
// is false when line is not one.
func orderedFields(line []byte) (fs rawFields, ok bool) {
	if len(line) == 0 || line[0] != '{' || !json.Valid(line) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		var v json.RawMessage
		if err != nil || !isKey || dec.Decode(&v) != nil {
			return nil, false
		}
		fs = append(fs, rawField{key, v})
	}
	return fs, true
}
