package gateway

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/health"
	"github.com/portico-gateway/portico/gateway/nonce"
)

// nonces is the process's nonce store of signed requests (auth.signed_apps),
// kept across reloads: a reload must not forget a nonce, or a captured
// request could be replayed. There is one store per redis.url ("" is one
// in memory), shared by every snapshot that uses it. When a reload
// changes redis.url, the new snapshot claims in the url's store through a
// nonce.Handover that also asks, for noncesHandover, each earlier url's
// store, so nonces claimed before the move still count; moving back to a
// url still asked reuses its store (one store per url, never a claim of
// one nonce twice in it). A store's Redis client closes when the last
// snapshot that asks it has drained. Made by New unless WithNonceStore
// gave one (then it never moves). Safe for concurrent use: snapshots
// drain on request goroutines.
type nonces struct {
	fixed  auth.NonceStore // WithNonceStore's; nil: the stores below
	now    func() time.Time
	log    *slog.Logger
	probed func(up bool) // tests: after each PING

	mu    sync.Mutex
	byURL map[string]*nonceStore // every store a snapshot holds
	live  *nonceSet              // the live snapshot's
}

// noncesHandover is how long a moved store is still asked: twice the
// longest auth.signed_apps.window (15m), the longest a nonce is kept.
const noncesHandover = 2 * 15 * time.Minute

// nonceStore is one redis.url's store, with its client (nil in memory)
// and how many snapshots hold it (under nonces.mu).
type nonceStore struct {
	url    string
	store  auth.NonceStore
	client *redis.Client
	probe  *redisProbe // with a client: /health's view of it
	refs   int
}

// nonceSet is one snapshot's nonce stores: the store its verifier claims
// in (its url's, or a Handover over it and earlier ones), and those it
// holds.
type nonceSet struct {
	store auth.NonceStore
	url   string
	prev  []nonce.Previous // the Handover's, oldest first
	held  []*nonceStore    // released when the snapshot drains
}

// next returns the nonce stores of a snapshot for cfg, held until
// release: the live snapshot's when redis.url is unchanged, else its url's
// store behind a Handover from the stores asked so far.
func (n *nonces) next(cfg config.Config) *nonceSet {
	if n.fixed != nil {
		return &nonceSet{store: n.fixed}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	url, now := cfg.Redis.URL, n.clock()
	set := &nonceSet{url: url}
	primary := n.hold(set, cfg)
	if live := n.live; live != nil {
		if live.url != url {
			set.prev = append(set.prev, nonce.Previous{Store: n.byURL[live.url].store, Until: now.Add(noncesHandover)})
		}
		for _, p := range live.prev {
			if now.After(p.Until) {
				continue
			}
			set.prev = append(set.prev, p)
		}
	}
	// Oldest first; a store asked twice (the url moved back) once, with
	// its latest Until, and never the url's own.
	slices.SortStableFunc(set.prev, func(a, b nonce.Previous) int { return a.Until.Compare(b.Until) })
	last := map[auth.NonceStore]int{}
	for i, p := range set.prev {
		last[p.Store] = i
	}
	kept := set.prev[:0:0]
	for i, p := range set.prev {
		if last[p.Store] == i && p.Store != primary.store {
			kept = append(kept, p)
		}
	}
	set.prev = kept
	for _, p := range set.prev {
		n.hold(set, config.Config{Redis: config.RedisConfig{URL: n.urlOf(p.Store)}})
	}
	set.store = primary.store
	if len(set.prev) > 0 {
		set.store = &nonce.Handover{Next: primary.store, Prev: set.prev, Now: n.now}
	}
	return set
}

// hold adds a reference of set to the store of cfg's redis.url, made
// (processNonces) when there is none.
func (n *nonces) hold(set *nonceSet, cfg config.Config) *nonceStore {
	url := cfg.Redis.URL
	if n.byURL == nil {
		n.byURL = map[string]*nonceStore{}
	}
	ns, ok := n.byURL[url]
	if !ok {
		store, c := processNonces(cfg, n.clock())
		ns = &nonceStore{url: url, store: store, client: c}
		if c != nil {
			ns.probe = startRedisProbe(c, nonce.DefaultTimeout, DefaultRedisProbeInterval, n.logProbe, n.probed)
		}
		n.byURL[url] = ns
	}
	ns.refs++
	set.held = append(set.held, ns)
	return ns
}

// urlOf returns the url of a held store.
func (n *nonces) urlOf(s auth.NonceStore) string {
	for url, ns := range n.byURL {
		if ns.store == s {
			return url
		}
	}
	return ""
}

// commit makes set (from next) the live one.
func (n *nonces) commit(set *nonceSet) {
	n.mu.Lock()
	n.live = set
	n.mu.Unlock()
}

// release drops set's references; a store no snapshot holds is
// forgotten and its client closed.
func (n *nonces) release(set *nonceSet) error {
	if set == nil || n.fixed != nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for _, ns := range set.held {
		if ns.refs--; ns.refs > 0 {
			continue
		}
		delete(n.byURL, ns.url)
		ns.probe.close()
		if ns.client != nil {
			errs = append(errs, ns.client.Close())
		}
	}
	return errors.Join(errs...)
}

// open returns how many stores some snapshot holds.
func (n *nonces) open() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.byURL)
}

func (n *nonces) logProbe(up bool) {
	if n.log == nil {
		return
	}
	if up {
		n.log.Info("nonces: Redis answers PING again")
	} else {
		n.log.Warn("nonces: Redis does not answer PING; signed requests are refused (fail closed) while it does not")
	}
}

// nonceHealth is /health's view of the signed requests' nonce store.
type nonceHealth struct {
	Store  string `json:"store"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// health reports the snapshot's own nonce store in Redis: DOWN while its
// probe gets no answer, its last claim got none, or it refuses after a
// data loss. nil for a store in memory or given by WithNonceStore.
func (set *nonceSet) health() *nonceHealth {
	if set == nil || len(set.held) == 0 || set.held[0].client == nil {
		return nil
	}
	ns := set.held[0]
	h := &nonceHealth{Store: "redis", Status: health.Up}
	r, _ := ns.store.(*nonce.Redis)
	switch {
	case !ns.probe.up() || (r != nil && r.Failing()):
		h.Status = health.Down
		h.Detail = fmt.Sprintf("Redis does not answer nonce checks within %s (%d attempts): signed requests are refused with 503 (fail closed); other credentials are served", nonce.DefaultTimeout, nonce.Attempts)
	case r != nil && r.Holding():
		h.Status = health.Down
		h.Detail = "Redis lost its data: signed requests are refused with 503 until every nonce used before the loss has expired; other credentials are served"
	}
	return h
}

func (n *nonces) clock() time.Time {
	if n.now != nil {
		return n.now()
	}
	return time.Now()
}
