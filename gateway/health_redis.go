package gateway

import (
	"github.com/portico-gateway/portico/gateway/health"
)

// healthReport is /health's body with the edge's own Redis uses: the rate
// limiter's (rateLimits) and the signed requests' nonce store (nonces).
type healthReport struct {
	health.Report
	RateLimits *rateLimitHealth `json:"rateLimits,omitempty"`
	Nonces     *nonceHealth     `json:"nonces,omitempty"`
}

// redisHealth adds what sn uses Redis for to rep (the upstreams' report):
// the rate limiter's Redis as the dependency "redis", and the nonce
// store's state. A Redis that fails makes the report DEGRADED, not DOWN:
// the edge still serves (limits fail open, only signed requests are
// refused); refusing is true only when the edge refuses every request for
// it (limits.redis.outage: closed).
func redisHealth(sn *snapshot, rep *health.Report) (body any, refusing bool) {
	dep, rl, refusing := sn.limits.health()
	nh := sn.nonceSet.health()
	if dep == nil && nh == nil {
		return rep, false
	}
	if dep != nil {
		rep.Dependencies = append(rep.Dependencies, *dep)
		if dep.Status != health.Up {
			rep.Status = health.Degraded
		}
	}
	if nh != nil && nh.Status != health.Up {
		rep.Status = health.Degraded
	}
	return healthReport{Report: *rep, RateLimits: rl, Nonces: nh}, refusing
}
