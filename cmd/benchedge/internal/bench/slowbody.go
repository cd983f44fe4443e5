package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// slowBodyFlags configure `benchedge slowbody`: the slow-body attack of
// issue 21 against a running edge (portico dev), with a legitimate client's
// success ratio and p99 recorded meanwhile. Bounded: conns attackers, for
// duration; loopback only.
type slowBodyFlags struct {
	addr, token, attackerToken string
	attackFrom, clientFrom     string
	conns, rate                int
	duration                   time.Duration
}

func parseSlowBody(args []string, stderr io.Writer) (slowBodyFlags, error) {
	var f slowBodyFlags
	fs := flag.NewFlagSet("slowbody", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:43100", "the edge's address (loopback)")
	fs.StringVar(&f.token, "token", "demo-read-token", "the legitimate client's token (GET /api/inventory/keyboard-001)")
	fs.StringVar(&f.attackerToken, "attacker-token", "demo-alice-token", "the attackers' token (POST /api/orders, body never sent)")
	fs.StringVar(&f.attackFrom, "attack-from", "127.0.0.1", "the attackers' local address")
	fs.StringVar(&f.clientFrom, "client-from", "127.0.0.2", "the legitimate client's local address")
	fs.IntVar(&f.rate, "rate", 40, "the legitimate client's requests a second (under dev's 50/s caller quota)")
	fs.IntVar(&f.conns, "conns", 64, "slow connections held open at once (each reopened when answered)")
	fs.DurationVar(&f.duration, "duration", 20*time.Second, "how long the attack and the measurement run")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if f.rate < 1 || f.rate > 1000 || f.conns < 0 || f.conns > 5000 || f.duration <= 0 || f.duration > 5*time.Minute {
		return f, fmt.Errorf("slowbody: want 0-5000 conns and a duration up to 5m")
	}
	return f, nil
}

// runSlowBody holds f.conns slow connections open (headers of an
// authorised POST, then one body byte every 500ms, reopened when the edge
// answers or closes, a second later) while one legitimate client sends GETs at f.rate;
// it prints the client's success ratio, p50 and p99 latency and the
// attackers' answers.
func runSlowBody(ctx context.Context, f slowBodyFlags, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, f.duration)
	defer cancel()
	var answers sync.Map // attackers' status line -> *atomic.Int64
	var wg sync.WaitGroup
	for i := range f.conns {
		wg.Go(func() { slowAttacker(ctx, f, i, &answers) })
	}
	lat, ok, total := legitLoad(ctx, f)
	wg.Wait()
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(float64(len(lat))*p))]
	}
	fmt.Fprintf(stdout, "slow conns %d, %v: legitimate client %d/%d ok (%.4f), p50 %v, p99 %v\n",
		f.conns, f.duration, ok, total, float64(ok)/float64(max(total, 1)), pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond))
	answers.Range(func(k, v any) bool {
		fmt.Fprintf(stdout, "  attackers answered %q: %d\n", k, v.(*atomic.Int64).Load())
		return true
	})
	return nil
}

func slowAttacker(ctx context.Context, f slowBodyFlags, i int, answers *sync.Map) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(f.attackFrom)}}
	for n := 0; ctx.Err() == nil; n++ {
		conn, err := d.DialContext(ctx, "tcp", f.addr)
		if err != nil {
			if ctx.Err() == nil {
				c, _ := answers.LoadOrStore("dial error", new(atomic.Int64))
				c.(*atomic.Int64).Add(1)
			}
			return
		}
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		req := fmt.Sprintf("POST /api/orders HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 100000\r\nIdempotency-Key: slow-%d-%d\r\n\r\n", f.attackerToken, i, n)
		if _, err := io.WriteString(conn, req); err == nil {
			// Trickle a byte every 500ms until the edge answers or closes.
			done := make(chan string, 1)
			go func() {
				buf := make([]byte, 64)
				k, _ := io.ReadAtLeast(conn, buf, 12)
				done <- string(buf[:min(k, 12)])
			}()
			t := time.NewTicker(500 * time.Millisecond)
		trickle:
			for {
				select {
				case line := <-done:
					if line == "" {
						line = "closed"
					}
					c, _ := answers.LoadOrStore(line, new(atomic.Int64))
					c.(*atomic.Int64).Add(1)
					break trickle
				case <-t.C:
					if _, err := conn.Write([]byte(" ")); err != nil {
						break trickle
					}
				case <-ctx.Done():
					break trickle
				}
			}
			t.Stop()
		}
		stop()
		conn.Close()
		select { // an attacker honouring Retry-After: 1 (and a bound on this program's own load)
		case <-time.After(time.Second):
		case <-ctx.Done():
		}
	}
}

// legitLoad sends f.rate GETs a second from f.clientFrom (one at a time:
// a late answer delays the next) until ctx ends and
// returns each answered request's latency, the 200s and the total.
func legitLoad(ctx context.Context, f slowBodyFlags) (lat []time.Duration, ok, total int) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(f.clientFrom)}}
	c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}, Timeout: 10 * time.Second}
	tick := time.NewTicker(time.Second / time.Duration(f.rate))
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return lat, ok, total
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+f.addr+"/api/inventory/keyboard-001", nil)
		req.Header.Set("Authorization", "Bearer "+f.token)
		start := time.Now()
		resp, err := c.Do(req)
		if ctx.Err() != nil {
			break
		}
		total++
		lat = append(lat, time.Since(start))
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			ok++
		}
	}
	return lat, ok, total
}
