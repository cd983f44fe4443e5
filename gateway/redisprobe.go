package gateway

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisProbeInterval is how often the edge PINGs each Redis it uses
// (rate limits, nonces) on its own, so /health follows Redis and not the
// traffic that happens to reach it.
const DefaultRedisProbeInterval = time.Second

// redisProbe PINGs one Redis client every interval, each PING bounded by
// timeout, and keeps the last answer. The first PING runs in
// startRedisProbe, so a Redis down at start is reported at once. Its
// goroutine runs until close.
type redisProbe struct {
	c        *redis.Client
	timeout  time.Duration
	down     atomic.Bool
	onChange func(up bool) // called when the answer changes (from up at first)
	probed   func(up bool) // tests: called after every PING
	stop     chan struct{}
	done     chan struct{}
}

// startRedisProbe PINGs c once and then every interval until close.
func startRedisProbe(c *redis.Client, timeout, interval time.Duration, onChange, probed func(up bool)) *redisProbe {
	p := &redisProbe{c: c, timeout: timeout, onChange: onChange, probed: probed,
		stop: make(chan struct{}), done: make(chan struct{})}
	p.check()
	go p.run(interval)
	return p
}

func (p *redisProbe) run(interval time.Duration) {
	defer close(p.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.check()
		}
	}
}

// check PINGs once.
func (p *redisProbe) check() {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	up := p.c.Ping(ctx).Err() == nil
	cancel()
	if p.down.Swap(!up) == up && p.onChange != nil { // changed
		p.onChange(up)
	}
	if p.probed != nil {
		p.probed(up)
	}
}

// up reports whether the last PING was answered; true for a nil probe.
func (p *redisProbe) up() bool { return p == nil || !p.down.Load() }

// close stops the probe and waits for its goroutine.
func (p *redisProbe) close() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
}
