// Package ratelimit decides whether a request fits its quotas: the edge's
// rate limiter, a GCRA (generic cell rate algorithm, the virtual-scheduling
// form of a token bucket) with an explicit burst.
//
// # Quotas and decisions
//
// A Limit admits Rate requests per Period on average, and up to Burst at
// once after a quiet spell (Burst 0 means Rate). A Request names up to
// MaxQuotas quotas, each a Limit on a key ("caller:alice", "group:orders",
// "global"), and is decided all or nothing: it is admitted only if every
// quota admits it, and a request refused by one quota consumes nothing of
// the others. The Decision says which quota refused (Denied), when a retry
// can succeed (RetryAfter, computed from the bucket) and what each quota
// has left (Results).
//
// # Bans
//
// With a BanPolicy, a caller (Request.Caller) whose requests are refused
// Threshold times within Window is banned for Duration: every request of a
// banned caller is refused with Decision.Banned, without touching its
// quotas. Refusals are counted by a GCRA bucket of Threshold per Window.
//
// # Stores
//
//   - Local keeps the state in memory, in shards with a bounded number of
//     keys each (DefaultMaxKeys in all): a flood of distinct keys evicts
//     the keys whose buckets are full (equal to absent) first, then those
//     closest to full, so memory stays bounded and the callers that matter
//     (those being limited) keep their state longest. A decision on known
//     keys takes no allocation, hashes each key once, and locks the shards
//     of its keys once; a Quota prepared once (Quota.Prepare, for a route
//     group's or the global quota) is not even hashed, and a Request that
//     carries its time (Request.Now) reads no clock.
//   - Redis keeps the state in a Redis server shared by every edge, so N
//     edges enforce one quota, not N. One Lua script decides a whole
//     Request atomically (every quota, the ban check and the refusal count)
//     in one round trip, on Redis's clock. Keys of one Request may live in
//     different hash slots, so it needs a single Redis server (or a
//     primary with replicas), not Redis Cluster.
//   - Pipeline sends the decisions that wait at the same moment to Redis as
//     one script run (DefaultPipelineWorkers runs in flight), which decides
//     them one after another, each all or nothing, on one reading of
//     Redis's clock: exactly as if each had run alone at that instant. A
//     batch reads every key once and writes every changed key once, so a
//     key most requests share (a route group's, the global one) costs
//     Redis one read and one write per batch, not per decision. Its
//     workers run until Close.
//   - Failover puts a tight timeout and a circuit breaker around Redis and
//     falls back, while Redis fails, to a local store (the default: each
//     edge enforces the quotas alone), to admitting everything, or to
//     refusing everything (ErrUnavailable). Bans seen from Redis are copied
//     to the local store, so known bans stay enforced through an outage,
//     and are written back to Redis (BanWriter) before its first decision
//     after the outage, so a Redis that comes back empty lifts none.
//
// Every store is safe for concurrent use.
package ratelimit
