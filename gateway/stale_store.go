package gateway

import (
	"cmp"
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/stale"
)

// staleCopies is the process's copies for stale answers, kept across
// reloads (a reload must not forget the copies it would answer while an
// upstream is down); each committed config sets its ceiling.
type staleCopies struct {
	lru     *stale.LRU
	ceiling atomic.Int64 // the LRU's max, read per request without its lock
}

func newStaleCopies() *staleCopies {
	return &staleCopies{lru: stale.NewLRU(0)}
}

// setMax applies stale.max_bytes (defaults applied; negative: none).
func (c *staleCopies) setMax(n int64) {
	c.ceiling.Store(n)
	c.lru.SetMax(n)
}

func (c *staleCopies) max() int64 { return c.ceiling.Load() }

// staleMaxBytes is cfg's ceiling: its default when zero.
func staleMaxBytes(cfg config.StaleConfig) int64 {
	return cmp.Or(cfg.MaxBytes, config.DefaultStaleMaxBytes)
}

// staleShared is a snapshot's Redis tier of copies. Snapshots with the
// same redis.url and stale.redis settings share one; refs counts them and
// the last to drain stops it and closes its client.
type staleShared struct {
	shared *stale.Shared
	client *redis.Client
	key    string
	refs   atomic.Int64
}

// staleSharedFor returns the Redis tier of cfg: prev's when its settings
// are the same, nil without Redis (or with stale.redis.disabled or no
// copies at all).
func staleSharedFor(cfg config.Config, prev *snapshot) (*staleShared, error) {
	if cfg.Redis.URL == "" || cfg.Stale.Redis.Disabled || staleMaxBytes(cfg.Stale) < 0 {
		return nil, nil
	}
	key := fmt.Sprintf("%s|%#v", cfg.Redis.URL, cfg.Stale.Redis)
	if prev != nil && prev.staleShared != nil && prev.staleShared.key == key {
		prev.staleShared.refs.Add(1)
		return prev.staleShared, nil
	}
	opt, err := redis.ParseURL(cfg.Redis.URL)
	if err != nil {
		return nil, fmt.Errorf("gateway config: redis.url: %w", err)
	}
	timeout := cmp.Or(cfg.Stale.Redis.Timeout, config.DefaultStaleRedisTimeout)
	// Tight timeouts and no retries, as for rate limits: a dead Redis
	// costs a stale answer at most one timeout.
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = timeout, timeout, timeout, timeout
	opt.MaxRetries, opt.ContextTimeoutEnabled = -1, true
	c := redis.NewClient(opt)
	ss := &staleShared{shared: stale.NewShared(c, cfg.Stale.Redis.Prefix, timeout), client: c, key: key}
	ss.refs.Store(1)
	return ss, nil
}

// release drops one snapshot's reference; the last stops the writer and
// closes the client.
func (ss *staleShared) release() error {
	if ss == nil || ss.refs.Add(-1) != 0 {
		return nil
	}
	ss.shared.Close()
	return ss.client.Close()
}

// staleGauge exports the copies' LRU at scrape time:
// portico_gateway_stale_bytes (held and ceiling), _copies and
// _evictions_total.
type staleGauge struct{ c *staleCopies }

var (
	staleBytesDesc = prometheus.NewDesc("portico_gateway_stale_bytes",
		"Bytes the copies kept for stale answers hold (keys, bodies, headers), and their ceiling (stale.max_bytes), by kind: held or max.", []string{"kind"}, nil)
	staleCopiesDesc = prometheus.NewDesc("portico_gateway_stale_copies",
		"Copies of GET answers kept in memory for stale answers.", nil, nil)
	staleEvictionsDesc = prometheus.NewDesc("portico_gateway_stale_evictions_total",
		"Copies dropped from memory to stay within stale.max_bytes.", nil, nil)
)

func (g staleGauge) Describe(ch chan<- *prometheus.Desc) {
	ch <- staleBytesDesc
	ch <- staleCopiesDesc
	ch <- staleEvictionsDesc
}

func (g staleGauge) Collect(ch chan<- prometheus.Metric) {
	st := g.c.lru.Stats()
	ch <- prometheus.MustNewConstMetric(staleBytesDesc, prometheus.GaugeValue, float64(st.Bytes), "held")
	ch <- prometheus.MustNewConstMetric(staleBytesDesc, prometheus.GaugeValue, float64(max(st.Max, 0)), "max")
	ch <- prometheus.MustNewConstMetric(staleCopiesDesc, prometheus.GaugeValue, float64(st.Copies))
	ch <- prometheus.MustNewConstMetric(staleEvictionsDesc, prometheus.CounterValue, float64(st.Evictions))
}
