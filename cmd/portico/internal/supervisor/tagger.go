package supervisor

import (
	"bytes"
	"encoding/json"
	"sync"
)

// maxLine bounds a buffered partial line; longer lines are split.
const maxLine = 64 << 10

// tagger splits a child's output into lines and writes each one to out,
// wrapping non-JSON lines so every line names its child.
type tagger struct {
	name string
	out  *lockedWriter
	mu   sync.Mutex
	buf  []byte
}

func newTagger(name string, out *lockedWriter) *tagger {
	return &tagger{name: name, out: out}
}

func (t *tagger) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			if len(t.buf) > maxLine {
				t.emit(t.buf)
				t.buf = t.buf[:0]
			}
			return len(b), nil
		}
		t.emit(t.buf[:i])
		t.buf = t.buf[i+1:]
	}
}

// Flush writes a trailing partial line, if any.
func (t *tagger) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > 0 {
		t.emit(t.buf)
		t.buf = nil
	}
}

func (t *tagger) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 {
		return
	}
	if line[0] == '{' && json.Valid(line) {
		_, _ = t.out.Write(append(append([]byte(nil), line...), '\n'))
		return
	}
	wrapped, _ := json.Marshal(struct {
		Service string `json:"service"`
		Msg     string `json:"msg"`
	}{t.name, string(line)})
	_, _ = t.out.Write(append(wrapped, '\n'))
}
