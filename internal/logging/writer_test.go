package logging

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writes records each Write to it, in order.
type writes struct {
	mu sync.Mutex
	w  []string
}

func (r *writes) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w = append(r.w, string(p))
	return len(p), nil
}

func (r *writes) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.w...)
}

var lineTime = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// accessLine writes an access line through Direct, at level.
func accessLine(t *testing.T, l *slog.Logger, level slog.Level, path string) {
	t.Helper()
	if !Direct(context.Background(), l, lineTime, level, "request", []slog.Attr{slog.String("path", path)}) {
		t.Fatal("Direct = false, want true")
	}
}

// bufferedLogger is New's logger over a Writer of size bytes over a
// writes.
func bufferedLogger(t *testing.T, size int) (*slog.Logger, *Writer, *writes) {
	t.Helper()
	rec := &writes{}
	w, err := NewWriter(rec, size)
	if err != nil {
		t.Fatal(err)
	}
	return New(w, "gateway", slog.LevelInfo), w, rec
}

// TestWriterBatches: access lines wait in the buffer; any other line
// writes them first, with itself, in one write; a warning or error
// access line does too. Whatever the batching, the bytes are those of an
// unbuffered logger, in the same order.
func TestWriterBatches(t *testing.T) {
	type step func(t *testing.T, l *slog.Logger)
	access := func(path string) step {
		return func(t *testing.T, l *slog.Logger) { accessLine(t, l, slog.LevelInfo, path) }
	}
	logged := func(level slog.Level, msg string) step {
		return func(t *testing.T, l *slog.Logger) { // at lineTime, so both loggers write the same bytes
			if err := l.Handler().Handle(context.Background(), slog.NewRecord(lineTime, level, msg, 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	accessAt := func(level slog.Level, path string) step {
		return func(t *testing.T, l *slog.Logger) { accessLine(t, l, level, path) }
	}
	tests := []struct {
		name   string
		steps  []step
		writes int // before Close
	}{
		{"access lines only", []step{access("/a"), access("/b"), access("/c")}, 0},
		{"an error flushes earlier access lines", []step{access("/a"), access("/b"), logged(slog.LevelError, "boom")}, 1},
		{"a warning flushes them", []step{access("/a"), logged(slog.LevelWarn, "slow")}, 1},
		{"an info line flushes them", []step{access("/a"), logged(slog.LevelInfo, "reloaded"), access("/b")}, 1},
		{"a failed request flushes them", []step{access("/a"), accessAt(slog.LevelError, "/b"), access("/c")}, 1},
		{"a debug access line is buffered", []step{accessAt(slog.LevelDebug, "/a"), access("/b")}, 0},
		{"other lines alone", []step{logged(slog.LevelInfo, "a"), logged(slog.LevelError, "b")}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, w, rec := bufferedLogger(t, DefaultBuffer)
			var plain strings.Builder
			pl := New(&plain, "gateway", slog.LevelInfo)
			for _, s := range tc.steps {
				s(t, l)
				s(t, pl)
			}
			if got := len(rec.get()); got != tc.writes {
				t.Errorf("writes before Close = %d, want %d: %q", got, tc.writes, rec.get())
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rec.get(), ""); got != plain.String() {
				t.Errorf("buffered logger wrote\n%s\nunbuffered\n%s", got, plain.String())
			}
		})
	}
}

// TestWriterFlushInterval: a buffered line is written FlushInterval after
// the buffer's first line, not before, and the countdown starts again
// with the next batch.
func TestWriterFlushInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, w, rec := bufferedLogger(t, DefaultBuffer)
		defer w.Close()
		for batch := range 2 {
			accessLine(t, l, slog.LevelInfo, "/first")
			time.Sleep(FlushInterval / 2)
			accessLine(t, l, slog.LevelInfo, "/second")
			time.Sleep(FlushInterval/2 - time.Nanosecond)
			synctest.Wait()
			if got := len(rec.get()); got != batch {
				t.Fatalf("batch %d: writes just before FlushInterval = %d, want %d", batch, got, batch)
			}
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			got := rec.get()
			if len(got) != batch+1 || strings.Count(got[batch], "\n") != 2 {
				t.Fatalf("batch %d: writes at FlushInterval = %q, want one more of both lines", batch, got)
			}
		}
	})
}

// TestWriterClose: Close writes what is buffered, and lines after it are
// written at once.
func TestWriterClose(t *testing.T) {
	l, w, rec := bufferedLogger(t, DefaultBuffer)
	accessLine(t, l, slog.LevelInfo, "/a")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rec.get(); len(got) != 1 || !strings.Contains(got[0], `"/a"`) {
		t.Fatalf("writes after Close = %q, want the buffered line", got)
	}
	accessLine(t, l, slog.LevelInfo, "/b")
	if got := rec.get(); len(got) != 2 || !strings.Contains(got[1], `"/b"`) {
		t.Fatalf("writes after a line past Close = %q, want it written at once", got)
	}
}

// TestWriterFlush: Flush writes what is buffered.
func TestWriterFlush(t *testing.T) {
	l, w, rec := bufferedLogger(t, DefaultBuffer)
	defer w.Close()
	accessLine(t, l, slog.LevelInfo, "/a")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := rec.get(); len(got) != 1 {
		t.Fatalf("writes after Flush = %q, want the buffered line", got)
	}
}

// TestWriterBounded: the buffer never grows past its size: a full buffer
// is written before the line that does not fit, and a line larger than
// the buffer is written on its own.
func TestWriterBounded(t *testing.T) {
	var plain strings.Builder
	accessLine(t, New(&plain, "gateway", slog.LevelInfo), slog.LevelInfo, "/a")
	size := 2*plain.Len() + 1 // two lines fit, not three
	l, w, rec := bufferedLogger(t, size)
	defer w.Close()
	for _, p := range []string{"/a", "/b", "/c"} {
		accessLine(t, l, slog.LevelInfo, p)
	}
	if got := rec.get(); len(got) != 1 || strings.Count(got[0], "\n") != 2 {
		t.Fatalf("writes after three lines = %q, want the first two in one", got)
	}
	long := "/" + strings.Repeat("x", size)
	accessLine(t, l, slog.LevelInfo, long)
	got := rec.get()
	if len(got) != 3 || !strings.Contains(got[1], `"/c"`) || !strings.Contains(got[2], long) {
		t.Fatalf("writes after a long line = %q, want /c, then the long line alone", got)
	}
	if cap(w.buf) != size {
		t.Errorf("buffer capacity = %d, want %d", cap(w.buf), size)
	}
}

// TestWriterUnbuffered: size 0 writes every line at once.
func TestWriterUnbuffered(t *testing.T) {
	l, w, rec := bufferedLogger(t, 0)
	defer w.Close()
	accessLine(t, l, slog.LevelInfo, "/a")
	accessLine(t, l, slog.LevelInfo, "/b")
	if got := rec.get(); len(got) != 2 {
		t.Fatalf("writes = %q, want each line", got)
	}
}

func TestNewWriterRejects(t *testing.T) {
	tests := []struct {
		name string
		w    *writes
		size int
	}{
		{"negative size", &writes{}, -1},
		{"no writer", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w *Writer
			var err error
			if tc.w == nil {
				w, err = NewWriter(nil, tc.size)
			} else {
				w, err = NewWriter(tc.w, tc.size)
			}
			if err == nil {
				t.Errorf("NewWriter(%s) = %v, nil; want an error", tc.name, w)
			}
		})
	}
}

// BenchmarkDirectFile is the edge's access line into a file, as a
// process's stdout redirected to one: one write system call a line
// unbuffered, one a batch buffered.
func BenchmarkDirectFile(b *testing.B) {
	a := access{method: "GET", path: "/api/inventory/kb-1", route: "/api/inventory/{sku}", status: 200,
		ms: 1.2, upstream: "inventory", client: "10.0.0.7", ua: "curl/8.5.0", subject: "reader", respBytes: 61}.attrs()
	ctx := withSpan(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	tm := time.Now()
	for _, size := range []int{0, DefaultBuffer} {
		b.Run(fmt.Sprintf("buffer=%d", size), func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			w, err := NewWriter(f, size)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			l := New(w, "gateway", slog.LevelInfo)
			b.ReportAllocs()
			for b.Loop() {
				Direct(ctx, l, tm, slog.LevelInfo, "request", a)
			}
		})
	}
}
