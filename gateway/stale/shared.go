package stale

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of Shared's settings.
const (
	// DefaultTimeout bounds each Redis call.
	DefaultTimeout = 50 * time.Millisecond
	// DefaultPrefix starts every key.
	DefaultPrefix = "portico:stale:"
	// queueSize bounds the writes waiting for Redis; more are dropped.
	queueSize = 256
	// backoff is how long Redis is skipped after a failed call.
	backoff = time.Second
)

// Shared keeps copies in Redis for every edge replica. Writes go through
// a bounded queue and one goroutine, started by NewShared and stopped by
// Close; reads wait at most the timeout.
type Shared struct {
	client  redis.UniversalClient
	prefix  string
	timeout time.Duration
	queue   chan write
	done    chan struct{}
	wg      sync.WaitGroup
	closed  sync.Once
	// skipUntil is the Unix nanosecond before which Redis is not asked,
	// after a failed call.
	skipUntil atomic.Int64
	// Dropped counts writes dropped (queue full, Redis skipped or failing).
	Dropped atomic.Uint64
}

type write struct {
	key Key
	val []byte
	ttl time.Duration
	// flushed, when set, marks a Flush: the writer closes it, having
	// handled every write queued before it.
	flushed chan struct{}
}

// NewShared returns a Shared over client (which the caller closes after
// Close); timeout <= 0 means DefaultTimeout, an empty prefix
// DefaultPrefix.
func NewShared(client redis.UniversalClient, prefix string, timeout time.Duration) *Shared {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	s := &Shared{client: client, prefix: prefix, timeout: timeout, queue: make(chan write, queueSize), done: make(chan struct{})}
	s.wg.Add(1)
	go s.writer()
	return s
}

// Offer queues c to be kept under k for ttl; it never blocks.
func (s *Shared) Offer(k Key, c Copy, ttl time.Duration) {
	select {
	case s.queue <- write{key: k, val: Encode(c), ttl: ttl}:
	default:
		s.Dropped.Add(1)
	}
}

func (s *Shared) writer() {
	defer s.wg.Done()
	for {
		select {
		case <-s.done:
			return
		case w := <-s.queue:
			if w.flushed != nil {
				close(w.flushed)
				continue
			}
			if s.skipping() {
				s.Dropped.Add(1)
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
			err := s.client.Set(ctx, s.prefix+formatVersion+string(w.key[:]), w.val, w.ttl).Err()
			cancel()
			if err != nil {
				s.failed()
				s.Dropped.Add(1)
			}
		}
	}
}

// formatVersion follows the prefix in every key: the version of Encode's
// format, so copies written by an older edge (without ETag) are misses,
// never misread; they expire by their TTL.
const formatVersion = "2:"

// Get returns the copy under k. A miss is (Copy{}, false, nil); Redis
// failing, or skipped after a failure, is an error.
func (s *Shared) Get(ctx context.Context, k Key) (Copy, bool, error) {
	if s.skipping() {
		return Copy{}, false, errSkipped
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	b, err := s.client.Get(ctx, s.prefix+formatVersion+string(k[:])).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return Copy{}, false, nil
	case err != nil:
		s.failed()
		return Copy{}, false, err
	}
	c, err := Decode(b)
	return c, err == nil, err
}

// errSkipped is Get's error while Redis is skipped after a failure.
var errSkipped = errors.New("stale: Redis skipped after a failure")

func (s *Shared) skipping() bool { return time.Now().UnixNano() < s.skipUntil.Load() }

func (s *Shared) failed() { s.skipUntil.Store(time.Now().Add(backoff).UnixNano()) }

// Flush returns once every write offered before it has been written to
// Redis or dropped, or when ctx ends (its error), or when s is closed. The
// edge never calls it: a replica that shares copies gets them eventually
// (tests wait on it instead of polling Redis).
func (s *Shared) Flush(ctx context.Context) error {
	w := write{flushed: make(chan struct{})}
	select {
	case s.queue <- w:
	case <-s.done:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-w.flushed:
		return nil
	case <-s.done:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errClosed is Flush's error once Close has been called.
var errClosed = errors.New("stale: shared copies closed")

// Close stops the writer; queued writes are dropped.
func (s *Shared) Close() {
	s.closed.Do(func() { close(s.done) })
	s.wg.Wait()
}
