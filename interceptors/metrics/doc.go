// Package metrics reports what the client chain does to Prometheus.
//
// New registers these series on the registry it is given (never the global
// one):
//
//	portico_upstream_retries_total{upstream}                   retries started (first attempts not counted)
//	portico_upstream_retry_budget_exhausted_total{upstream}    retries the budget refused
//	portico_upstream_breaker_state{breaker,state}              1 for the state it is in, 0 for the others
//	portico_upstream_breaker_transitions_total{breaker,from,to}
//	portico_upstream_bulkhead_rejections_total{upstream}       calls failed with OVERLOADED
//	portico_upstream_in_flight{upstream}                       calls holding a bulkhead slot
//	portico_upstream_ejections_total{upstream}                 addresses ejected
//	portico_upstream_ejected{upstream}                         addresses out right now
//
// state is closed, half-open or open: one series per state (the one the
// breaker is in is 1), so {state="open"} == 1 needs no numeric code. A
// breaker's state series appear with Init or its first transition; until
// then the breaker is closed. Addresses are logged, not used as labels, to keep
// the series count bounded.
//
// *Prometheus satisfies interceptors.Metrics (retry.Observer,
// breaker.Observer, bulkhead.Observer and balance.Observer) and is safe for
// concurrent use. The in-flight gauge is resolved once per upstream and
// cached, so the per-call cost is an atomic add.
package metrics
