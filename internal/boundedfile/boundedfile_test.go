package boundedfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRead: a file within the bound is read whole; one over it, a regular
// file or an endless stream such as /dev/urandom, is refused with an
// error naming the file and the bound, after reading at most bound+1
// bytes.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte("a"), n), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		path    string
		limit   int64
		wantLen int
		tooBig  bool
	}{
		{"empty", file("empty", 0), 10, 0, false},
		{"at the bound", file("at", 10), 10, 10, false},
		{"over the bound", file("over", 11), 10, 0, true},
		{"default bound", file("def", 1000), 0, 1000, false},
		{"endless stream", "/dev/zero", 1 << 10, 0, true},
		{"random stream", "/dev/urandom", DefaultLimit, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skip(err)
			}
			b, err := Read(tt.path, tt.limit)
			if tt.tooBig {
				if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), strconv.FormatInt(tt.limit, 10)) {
					t.Fatalf("Read(%s, %d) = %d bytes, %v; want ErrTooLarge naming the file and bound", tt.path, tt.limit, len(b), err)
				}
				return
			}
			if err != nil || len(b) != tt.wantLen {
				t.Fatalf("Read(%s, %d) = %d bytes, %v; want %d bytes", tt.path, tt.limit, len(b), err, tt.wantLen)
			}
		})
	}
}

// TestReadFIFO: a pipe that keeps writing is refused at the bound, as a
// device is.
func TestReadFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		chunk := bytes.Repeat([]byte("x"), 1<<10)
		for i := 0; i < 64; i++ { // 64 KiB, bounded
			if _, err := w.Write(chunk); err != nil {
				return // the reader stopped at the bound
			}
		}
	}()
	_, err := Read(p, 4<<10)
	<-done
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read(fifo, 4096) error = %v, want ErrTooLarge", err)
	}
}

// TestReadMissing: a missing file is os.ErrNotExist, as os.ReadFile says.
func TestReadMissing(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "nope"), 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Read(missing) error = %v, want ErrNotExist", err)
	}
}
