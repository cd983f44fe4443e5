package gateway

import "github.com/prometheus/client_golang/prometheus"

// redisGauge is portico_gateway_ratelimit_redis_degraded: 1 while the
// live snapshot's rate limiter cannot reach its Redis (limits follow the
// outage policy, as /health says; the edge's own PINGs tell, so an idle
// edge reports it too), else 0, also when no Redis is
// configured; read at scrape time, so it exists from the first scrape
// and a reload needs no registration.
type redisGauge struct{ s *Server }

var redisGaugeDesc = prometheus.NewDesc("portico_gateway_ratelimit_redis_degraded",
	"1 while the rate limiter's Redis is failing (limits follow the outage policy), else 0.", nil, nil)

func (g redisGauge) Describe(ch chan<- *prometheus.Desc) { ch <- redisGaugeDesc }

func (g redisGauge) Collect(ch chan<- prometheus.Metric) {
	v := 0.0
	if sn := g.s.snap.Load(); sn != nil && sn.limits.redisDown() {
		v = 1
	}
	ch <- prometheus.MustNewConstMetric(redisGaugeDesc, prometheus.GaugeValue, v)
}
