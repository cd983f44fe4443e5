package filewatch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

// TestWatch: each way a config file changes is reported once, after it
// settles; a file still being written is not reported mid-write.
func TestWatch(t *testing.T) {
	const tick = time.Second
	tests := []struct {
		name   string
		change func(t *testing.T, dir, path string)
		want   int
	}{
		{"no change", func(*testing.T, string, string) {}, 0},
		{"edit in place", func(t *testing.T, _, path string) { write(t, path, "b") }, 1},
		{"atomic rename", func(t *testing.T, dir, path string) {
			write(t, filepath.Join(dir, "tmp"), "b")
			if err := os.Rename(filepath.Join(dir, "tmp"), path); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"configmap symlink swap", func(t *testing.T, dir, path string) {
			// kubelet: ..data -> ..v1; the file is a link through ..data.
			// An update writes ..v2 and renames a new ..data link over it.
			write(t, filepath.Join(dir, "..v2", "gateway.yaml"), "b")
			if err := os.Symlink("..v2", filepath.Join(dir, "..data_tmp")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
				t.Fatal(err)
			}
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				write(t, filepath.Join(dir, "..v1", "gateway.yaml"), "a")
				mustLink(t, "..v1", filepath.Join(dir, "..data"))
				path := filepath.Join(dir, "gateway.yaml")
				mustLink(t, filepath.Join("..data", "gateway.yaml"), path)
				ctx, cancel := context.WithCancel(t.Context())
				n := 0
				done := make(chan struct{})
				go func() { defer close(done); Watch(ctx, path, tick, func() { n++ }) }()
				synctest.Wait()
				tt.change(t, dir, path)
				time.Sleep(5 * tick) // fake time: five polls
				synctest.Wait()
				cancel()
				<-done
				if n != tt.want {
					t.Errorf("changes reported = %d, want %d", n, tt.want)
				}
			})
		})
	}
}

// TestWatchWaitsForTheWriteToSettle: content that changes on every poll
// (a slow writer) is reported only once it holds still, with its final
// content.
func TestWatchWaitsForTheWriteToSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "gateway.yaml")
		write(t, path, "a")
		var seen []string
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			Watch(ctx, path, time.Second, func() {
				b, _ := os.ReadFile(path)
				seen = append(seen, string(b))
			})
		}()
		for _, part := range []string{"li", "listen", "listen: x"} {
			time.Sleep(time.Second) // one poll per partial write
			synctest.Wait()
			write(t, path, part)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		cancel()
		<-done
		if len(seen) != 1 || seen[0] != "listen: x" {
			t.Errorf("reported %q, want only the settled content", seen)
		}
	})
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
