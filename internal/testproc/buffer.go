package testproc

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// Buffer is a goroutine-safe io.Writer that keeps everything written to
// it, for capturing a process's or a logger's output in a test. WaitFor
// re-checks a condition after each write instead of polling. The zero
// value is ready to use.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced by each write
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// WaitFor waits until cond holds of everything written so far, checking
// it now and after every write, or until ctx ends or timeout passes. It
// reports whether cond held.
func (b *Buffer) WaitFor(ctx context.Context, timeout time.Duration, cond func(string) bool) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		b.mu.Lock()
		s := b.b.String()
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()
		if cond(s) {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}
