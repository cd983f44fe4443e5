package freeport

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// isolate points Dir at a directory of the test's own.
func isolate(t *testing.T) {
	old := Dir
	Dir = t.TempDir()
	t.Cleanup(func() { Dir = old })
}

func TestPortsBelowEphemeralRange(t *testing.T) {
	isolate(t)
	low, high := span()
	r, err := Ports(10)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if r.Base < low || r.Base+9 > high {
		t.Fatalf("ports %d..%d outside %d-%d", r.Base, r.Base+9, low, high)
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		start, _ := strconv.Atoi(strings.Fields(string(b))[0])
		if start > 10000 && r.Base+9 >= start {
			t.Fatalf("port %d inside the ephemeral range from %d", r.Base+9, start)
		}
	}
	for p := r.Base; p < r.Base+10; p++ {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("reserved port %d not bindable: %v", p, err)
		}
		l.Close()
	}
}

func TestConcurrentReservationsAreDisjoint(t *testing.T) {
	isolate(t)
	const workers, n = 16, 10
	var (
		mu   sync.Mutex
		seen = map[int]bool{}
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			r, err := Ports(n)
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(r.Release)
			mu.Lock()
			defer mu.Unlock()
			for p := r.Base; p < r.Base+n; p++ {
				if seen[p] {
					t.Errorf("port %d handed out twice", p)
				}
				seen[p] = true
			}
		})
	}
	wg.Wait()
}

func TestReleaseAndStaleTakeover(t *testing.T) {
	isolate(t)
	r, err := Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(Dir, strconv.Itoa(r.Base))
	if _, ok := lock(r.Base); ok {
		t.Fatal("a held reservation was taken")
	}
	r.Release()
	r.Release() // twice is harmless
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Fatalf("release left %s: %v", name, err)
	}
	// A reservation of a process that has died is taken over; one being
	// written (empty) or of a live process is not.
	for _, tc := range []struct {
		content string
		taken   bool
	}{
		{"2147483646", true}, // no such pid
		{"garbage", true},
		{"", false},
		{strconv.Itoa(os.Getpid()), false},
	} {
		if err := os.WriteFile(name, []byte(tc.content), 0o666); err != nil {
			t.Fatal(err)
		}
		_, ok := lock(r.Base)
		if ok != tc.taken {
			t.Errorf("content %q: taken %v, want %v", tc.content, ok, tc.taken)
		}
		os.Remove(name)
	}
}

func TestBoundPortIsSkipped(t *testing.T) {
	isolate(t)
	r, err := Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(r.Base))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r.Release()
	if _, ok := reserve(r.Base, 1); ok {
		t.Fatal("a port with a listener was reserved")
	}
	if _, err := Ports(0); err == nil {
		t.Fatal("Ports(0) succeeded")
	}
}
