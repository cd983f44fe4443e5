package gateway

import (
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/nonce"
)

// nonces is the process's nonce store of signed requests (auth.signed_apps),
// kept across reloads: a reload must not forget a nonce, or a captured
// request could be replayed. When a reload changes redis.url, the new
// store takes over through a nonce.Handover that also asks the old one for
// noncesHandover, so nonces claimed before the move still count. The
// Redis clients of moved stores stay open until Close (one per move). Made by New unless
// WithNonceStore gave one (then it never moves).
type nonces struct {
	store   auth.NonceStore
	url     string          // redis.url the newest store was made for
	clients []*redis.Client // every Redis client made; closed by Close
	managed bool
}

// noncesHandover is how long a moved store is still asked: twice the
// longest auth.signed_apps.window (15m), the longest a nonce is kept.
const noncesHandover = 2 * 15 * time.Minute

// next returns the store for cfg and the client it opened, if any: the
// current one when redis.url is unchanged, else a Handover from it.
func (n *nonces) next(cfg Config, now time.Time) (auth.NonceStore, *redis.Client) {
	if !n.managed || cfg.Redis.URL == n.url {
		return n.store, nil
	}
	fresh, c := processNonces(cfg)
	cur := nonce.Current(n.store, now)
	return &nonce.Handover{Next: fresh, Prev: cur, Until: now.Add(noncesHandover)}, c
}

// commit makes store (from next, for cfg) the live one.
func (n *nonces) commit(cfg Config, store auth.NonceStore, c *redis.Client) {
	n.store, n.url = store, cfg.Redis.URL
	if c != nil {
		n.clients = append(n.clients, c)
	}
}
