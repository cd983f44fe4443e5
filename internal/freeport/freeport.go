// Package freeport hands out loopback TCP ports for processes that must be
// told their port before they start (portico dev's --base-port, a service's
// --listen), without the race of "bind :0, close, pass the number on".
//
// That race has two sources, and each is closed here:
//   - the kernel gives a port taken from its ephemeral range to the next
//     outgoing connection or :0 listener, often within milliseconds: ports
//     are handed out below that range (Linux: net.ipv4.ip_local_port_range),
//     where the kernel never picks one by itself;
//   - two test binaries running at once (go test -p) could pick the same
//     port: each port is reserved by a lock file in a directory all of them
//     share, created exclusively and removed on release; a reservation whose
//     process has died is taken over.
//
// A port is also checked free by binding it before it is handed out.
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Default range, used when the ephemeral range cannot be read (not Linux):
// below the IANA dynamic range (49152-65535) and Linux's default ephemeral
// start (32768).
const (
	defaultLow  = 20000
	defaultHigh = 32767
	tries       = 200
)

// Dir is where reservations live; every process on the machine that uses
// the package shares it.
var Dir = filepath.Join(os.TempDir(), "portico-freeport")

// Reservation holds n consecutive ports from Base until Release.
type Reservation struct {
	Base  int
	n     int
	files []string
}

// Release frees the ports for others; it is safe to call more than once.
func (r *Reservation) Release() {
	for _, f := range r.files {
		os.Remove(f)
	}
	r.files = nil
}

// Ports returns n consecutive free loopback ports, reserved until Release.
func Ports(n int) (*Reservation, error) {
	if n < 1 {
		return nil, errors.New("freeport: n must be at least 1")
	}
	if err := os.MkdirAll(Dir, 0o777); err != nil {
		return nil, fmt.Errorf("freeport: %w", err)
	}
	low, high := span()
	if high-low+1 < n {
		return nil, fmt.Errorf("freeport: range %d-%d holds no %d ports", low, high, n)
	}
	for range tries {
		base := low + rand.IntN(high-low+2-n)
		if r, ok := reserve(base, n); ok {
			return r, nil
		}
	}
	return nil, fmt.Errorf("freeport: no %d consecutive free ports in %d-%d", n, low, high)
}

// reserve takes base..base+n-1 when every one is unreserved and bindable.
func reserve(base, n int) (*Reservation, bool) {
	r := &Reservation{Base: base, n: n}
	for p := base; p < base+n; p++ {
		f, ok := lock(p)
		if !ok {
			r.Release()
			return nil, false
		}
		r.files = append(r.files, f)
		if !bindable(p) {
			r.Release()
			return nil, false
		}
	}
	return r, true
}

// lock creates port's reservation file, taking over one left by a process
// that has died.
func lock(port int) (string, bool) {
	name := filepath.Join(Dir, strconv.Itoa(port))
	for range 2 {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err == nil {
			fmt.Fprint(f, os.Getpid())
			f.Close()
			return name, true
		}
		if !stale(name) {
			return "", false
		}
		os.Remove(name)
	}
	return "", false
}

// stale reports whether name was written by a process that no longer runs.
func stale(name string) bool {
	b, err := os.ReadFile(name)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return len(b) > 0 // garbage: stale; empty: being written now
	}
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

// bindable reports whether nothing listens on 127.0.0.1:port now.
func bindable(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// span is the range ports are handed out from: below the kernel's
// ephemeral range when that can be read, else the default.
func span() (low, high int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultLow, defaultHigh
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return defaultLow, defaultHigh
	}
	start, err := strconv.Atoi(f[0])
	if err != nil || start <= 10000 {
		return defaultLow, defaultHigh
	}
	return max(1024, start-12768), start - 1
}
