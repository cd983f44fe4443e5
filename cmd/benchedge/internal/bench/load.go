package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// loadFlags are `benchedge load`'s settings: a lean HTTP/1.1 generator
// (keep-alive connections, a pre-encoded request, net/http's response
// parser), cheaper per request than vegeta's client, so that on a small
// machine the generator is not what saturates.
type loadFlags struct {
	url, token string
	method     string
	body       string
	headers    headerList
	conns      int
	rate       int // 0: closed loop, each connection sends its next request on the last answer
	dur        time.Duration
}

// LoadResult is `benchedge load`'s JSON output.
type LoadResult struct {
	Seconds   float64         `json:"seconds"`
	Scheduled int             `json:"scheduled"` // open loop: requests due in the period
	Unsent    int             `json:"unsent"`    // open loop: due but never sent (every connection busy to the end)
	Codes     map[int]int     `json:"codes"`     // status -> count; 0 is a transport error
	Latency   map[int][]int64 `json:"latencyUs"` // status -> sorted latencies, µs, from the scheduled time
	Errors    []string        `json:"errors,omitempty"`
	// GeneratorCPU is the generator process's CPU time (user+system),
	// filled by the harness that ran it.
	GeneratorCPU time.Duration `json:"-"`
}

func parseLoad(args []string, stderr io.Writer) (loadFlags, error) {
	var f loadFlags
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.url, "url", "", "GET this `URL` (http only)")
	fs.StringVar(&f.token, "token", "", "send Authorization: Bearer `TOKEN`")
	fs.StringVar(&f.method, "method", http.MethodGet, "the request's `METHOD`")
	fs.StringVar(&f.body, "body", "", "the request's `BODY`, with its Content-Length")
	fs.Var(&f.headers, "header", "send this `NAME: VALUE` header too (repeatable)")
	fs.IntVar(&f.conns, "conns", 64, "keep-alive connections")
	fs.IntVar(&f.rate, "rate", 0, "requests a second, open loop; 0 is closed loop")
	fs.DurationVar(&f.dur, "duration", 10*time.Second, "how long load is offered")
	err := fs.Parse(args)
	if err == nil && (f.url == "" || f.conns < 1 || f.dur <= 0 || f.rate < 0) {
		err = errors.New("load: want -url, -conns >= 1, -duration > 0, -rate >= 0")
	}
	return f, err
}

// runLoad offers the load and prints a LoadResult as JSON.
func runLoad(ctx context.Context, f loadFlags, stdout io.Writer) error {
	u, err := url.Parse(f.url)
	if err != nil || u.Scheme != "http" {
		return fmt.Errorf("load: -url %q: want http://host:port/path", f.url)
	}
	req := f.method + " " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: benchedge\r\n"
	if f.token != "" {
		req += "Authorization: Bearer " + f.token + "\r\n"
	}
	for _, h := range f.headers {
		req += h + "\r\n"
	}
	if f.body != "" {
		req += "Content-Length: " + strconv.Itoa(len(f.body)) + "\r\n"
	}
	req += "\r\n" + f.body
	host, raw := u.Host, []byte(req)
	res := generate(ctx, f, func() doer { return &conn{host: host, req: raw} })
	return json.NewEncoder(stdout).Encode(res)
}

// doer sends one request and returns its status (0: no answer); each
// connection of the generator has its own.
type doer interface {
	do(ctx context.Context) (int, error)
	close()
}

type sample struct {
	code int
	lat  time.Duration
}

// generate runs the connections; in open loop a pacer hands each due
// time to a free connection, and a request's latency counts from its due
// time, so waiting for a connection is counted (no coordinated omission).
func generate(ctx context.Context, f loadFlags, newDoer func() doer) LoadResult {
	ctx, cancel := context.WithTimeout(ctx, f.dur)
	defer cancel()
	due := make(chan time.Time, 1<<16)
	var (
		mu      sync.Mutex
		samples = make([]sample, 0, 1<<16)
		errs    = map[string]bool{}
		wg      sync.WaitGroup
	)
	start := time.Now()
	for range f.conns {
		wg.Go(func() {
			local := make([]sample, 0, 1024)
			c := newDoer()
			defer c.close()
			for {
				t0 := time.Now()
				if f.rate > 0 {
					select {
					case t0 = <-due:
					case <-ctx.Done():
						goto done
					}
				} else if ctx.Err() != nil {
					break
				}
				code, err := c.do(ctx)
				local = append(local, sample{code, time.Since(t0)})
				if err != nil {
					mu.Lock()
					if len(errs) < 5 {
						errs[err.Error()] = true
					}
					mu.Unlock()
				}
			}
		done:
			mu.Lock()
			samples = append(samples, local...)
			mu.Unlock()
		})
	}
	scheduled := 0
	if f.rate > 0 {
		scheduled = pace(ctx, f.rate, start, due)
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	res := LoadResult{Seconds: round(secs, 2), Scheduled: scheduled, Unsent: len(due),
		Codes: map[int]int{}, Latency: map[int][]int64{}}
	for _, s := range samples {
		res.Codes[s.code]++
		res.Latency[s.code] = append(res.Latency[s.code], s.lat.Microseconds())
	}
	for _, l := range res.Latency {
		slices.Sort(l)
	}
	for e := range errs {
		res.Errors = append(res.Errors, e)
	}
	return res
}

// pace sends rate due times a second to due until ctx ends and returns
// how many it scheduled. A full channel (every connection busy for a long
// time) drops the due time: it is counted as scheduled but never sent.
func pace(ctx context.Context, rate int, start time.Time, due chan<- time.Time) int {
	interval := time.Second / time.Duration(rate)
	n := 0
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		for next := start.Add(time.Duration(n) * interval); !next.After(now); next = start.Add(time.Duration(n) * interval) {
			select {
			case due <- next:
			default:
			}
			n++
		}
		select {
		case <-ctx.Done():
			return n
		case <-tick.C:
		}
	}
}

// conn is one keep-alive connection, redialled after an error or a
// Connection: close.
type conn struct {
	host string
	req  []byte
	c    net.Conn
	br   *bufio.Reader
}

func (c *conn) do(ctx context.Context) (int, error) {
	if c.c == nil {
		d := net.Dialer{Timeout: 5 * time.Second}
		nc, err := d.DialContext(ctx, "tcp", c.host)
		if err != nil {
			return 0, err
		}
		c.c, c.br = nc, bufio.NewReaderSize(nc, 4096)
	}
	_ = c.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.c.Write(c.req); err != nil {
		c.close()
		return 0, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.close()
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		c.close()
	}
	return resp.StatusCode, nil
}

func (c *conn) close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

// headerList is -header's values.
type headerList []string

func (h *headerList) String() string { return strings.Join(*h, ", ") }

func (h *headerList) Set(v string) error {
	if !strings.Contains(v, ":") || strings.ContainsAny(v, "\r\n") {
		return fmt.Errorf("-header %q: want NAME: VALUE", v)
	}
	*h = append(*h, v)
	return nil
}
