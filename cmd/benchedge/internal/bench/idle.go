package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// idleConns is how many keep-alive connections the idle phase holds open.
const idleConns = 5000

// idlePhase measures (b), (d) and (e)'s RSS per idle connection with n
// connections. It runs first, on processes that have served only the
// equivalence probes: after the closed-loop rounds, the heap those left
// free would absorb the connections' memory (one run found 0.4 KiB).
func idlePhase(ctx context.Context, systems []*system, sums map[string]*Summary, n int, stderr io.Writer) error {
	if n <= 0 {
		return nil
	}
	for _, s := range systems {
		if s.Key != "b" && s.Key != "d" && s.Key != "e" {
			continue
		}
		kib, err := idleConnKiB(ctx, s, n, http.StatusOK)
		if err != nil {
			return err
		}
		sums[s.Key].IdleConnKiB = kib
		fmt.Fprintf(stderr, "idle %s: %.1f KiB per connection over %d\n", s.Key, kib, n)
	}
	return nil
}

// idleFloor measures net/http's own RSS per idle connection, the floor
// under (b), (d) and (e)'s: `benchedge floor` (which answers every request
// with a 503 and keeps the connection) started as they are, measured as
// they are with n connections, then stopped. It returns 0 when n <= 0.
func idleFloor(ctx context.Context, dir string, n int, stderr io.Writer) (float64, error) {
	if n <= 0 {
		return 0, nil
	}
	fl, url, err := startFloor(ctx, dir)
	defer fl.stop()
	if err != nil {
		return 0, err
	}
	s := &system{Key: "floor", Name: "net/http alone", url: url + "/api/inventory/" + benchSKU, proc: fl}
	kib, err := idleConnKiB(ctx, s, n, http.StatusServiceUnavailable)
	if err == nil {
		fmt.Fprintf(stderr, "idle net/http alone: %.1f KiB per connection over %d\n", kib, n)
	}
	return kib, err
}

// idleConnKiB measures s's memory per idle keep-alive HTTP/1.1 connection:
// its RSS (VmRSS) before and after n connections each sent one request,
// read the answer (status want) and stayed open, the growth over n, in
// KiB. The connections are closed before it returns.
func idleConnKiB(ctx context.Context, s *system, n, want int) (float64, error) {
	pid := s.proc.cmd.Process.Pid
	before, err := vmRSS(pid)
	if err != nil {
		return 0, err
	}
	u, err := url.Parse(s.url)
	if err != nil {
		return 0, err
	}
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n"
	if s.token != "" {
		req += "Authorization: Bearer " + s.token + "\r\n"
	}
	req += "\r\n"
	conns := make([]net.Conn, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				c, err := openIdle(ctx, u.Host, req, want)
				mu.Lock()
				conns[i] = c
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		return 0, fmt.Errorf("%s: idle connections: %w", s.Name, first)
	}
	// Let the server's connection goroutines reach their idle read, and
	// the runtime its steady state, before reading the RSS.
	time.Sleep(2 * time.Second)
	after, err := vmRSS(pid)
	if err != nil {
		return 0, err
	}
	return round(float64(after-before)/float64(n), 1), nil
}

// openIdle dials host, sends req and reads an answer of status want,
// leaving the connection open.
func openIdle(ctx context.Context, host, req string, want int) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		return c, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return c, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want || resp.Close {
		return c, fmt.Errorf("status %d (close %v)", resp.StatusCode, resp.Close)
	}
	return c, c.SetDeadline(time.Time{})
}

// vmRSS reads pid's resident set size in KiB from /proc/<pid>/status.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}
