package logging

import (
	"errors"
	"io"
	"sync"
	"time"
)

// DefaultBuffer is the buffer a process gives its access lines (see
// Writer): a few hundred lines, so a busy process writes its log with one
// write system call per batch instead of one per request.
const DefaultBuffer = 64 << 10

// FlushInterval is the longest an access line waits in a Writer's buffer.
const FlushInterval = 100 * time.Millisecond

// BufferEnv names the environment variable that sets a process's log
// buffer in bytes (NewWriter's size): unset means DefaultBuffer, 0 writes
// every line at once.
const BufferEnv = "PORTICO_LOG_BUFFER"

// Writer is a process's log output: it serialises the writes of New's
// handler and of Direct, each record one Write to the underlying writer,
// never two at once, and it buffers access lines (Direct's lines below
// WARN) up to its size, writing them in one Write when the buffer is full,
// when any other line is written (first the buffered lines, then the line,
// so the order of lines holds and no warning or error waits), FlushInterval
// after the first buffered line at the latest, and on Flush and Close. A
// line larger than the buffer is written on its own, so the buffer stays
// bounded. Lines still buffered when the process dies without Close are
// lost. A Writer is safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte      // buffered lines, cap size; nil when unbuffered
	timer  *time.Timer // flushes buf FlushInterval after its first line; nil until then
	closed bool
}

// NewWriter returns a Writer over w that buffers up to size bytes of
// access lines; size 0 means none (every line is written at once).
func NewWriter(w io.Writer, size int) (*Writer, error) {
	if w == nil {
		return nil, errors.New("logging: NewWriter needs a writer")
	}
	if size < 0 {
		return nil, errors.New("logging: a negative buffer size")
	}
	lw := &Writer{w: w}
	if size > 0 {
		lw.buf = make([]byte, 0, size)
	}
	return lw, nil
}

// Write writes the buffered lines and then p, at once (in one Write to the
// underlying writer when they fit in the buffer). It is what New's JSON
// handler writes through: every line but an access line.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return w.w.Write(p)
	}
	if len(w.buf)+len(p) <= cap(w.buf) {
		w.buf = append(w.buf, p...)
		if err := w.flushLocked(); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if err := w.flushLocked(); err != nil {
		return 0, err
	}
	return w.w.Write(p)
}

// writeLine buffers the access line p (see Writer). Errors of a buffered
// write are not reported, as slog does not report them.
func (w *Writer) writeLine(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || len(p) > cap(w.buf) { // unbuffered, closed, or a line too long to buffer
		_ = w.flushLocked()
		_, _ = w.w.Write(p)
		return
	}
	if len(w.buf)+len(p) > cap(w.buf) {
		_ = w.flushLocked()
	}
	if len(w.buf) == 0 {
		w.armLocked()
	}
	w.buf = append(w.buf, p...)
}

// armLocked starts the FlushInterval countdown of the buffer's first line.
// time.AfterFunc starts no goroutine until it fires, so an idle Writer
// holds none.
func (w *Writer) armLocked() {
	if w.timer == nil {
		w.timer = time.AfterFunc(FlushInterval, func() { _ = w.Flush() })
		return
	}
	w.timer.Reset(FlushInterval)
}

// Flush writes the buffered lines now.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// Close writes the buffered lines and stops buffering: later lines are
// written at once (a process may still log while it stops). It does not
// close the underlying writer. Call it when the process stops.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	return w.flushLocked()
}
