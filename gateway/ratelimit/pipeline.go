package ratelimit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of a Pipeline.
const (
	DefaultPipelineWorkers = 2
	DefaultPipelineBatch   = 64
	DefaultPipelineTimeout = time.Second
	// MaxPipelineBatch bounds Batch: a script run reads its keys with one
	// MGET, and Lua unpacks at most about 8000 values into one call.
	MaxPipelineBatch = 1000
)

// errClosed fails the decisions a closed Pipeline could not send.
var errClosed = errors.New("ratelimit: pipeline closed")

// Pipeline is the Redis store with concurrent decisions sent together:
// each worker takes the decisions waiting (up to Batch, never waiting for
// more) and sends them as one script run, which decides them one after
// another on one reading of Redis's clock, each all or nothing, exactly as
// if each had run alone at that instant. A batch reads and writes each
// key once (the route group's and the global quota, which most requests
// share, once for the whole batch), which is what bounds decisions per
// second from one edge: Redis's CPU per decision. Coalescing costs no
// waiting: a batch is what queued while the previous ones were in flight,
// so an idle edge sends each decision alone at once. A decision whose
// context ended before its batch left is dropped from it (it consumes
// nothing); one whose context ends while its batch is in flight returns
// at once with the context's error, though Redis may still count it.
// Build it with NewPipeline and stop it with Close.
type Pipeline struct {
	store   *Redis
	client  redis.Scripter
	batch   int
	timeout time.Duration
	calls   chan *call
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	onSend  func(n int) // tests: called with each batch's size before it is sent
}

type call struct {
	ctx   context.Context
	req   *Request
	d     Decision
	err   error
	ready chan struct{}
}

// NewPipeline starts workers (zero means DefaultPipelineWorkers) sending
// batches of up to batch decisions (zero means DefaultPipelineBatch) of
// store through client, each batch within timeout (zero means
// DefaultPipelineTimeout; a caller's shorter deadline still returns early).
func NewPipeline(store *Redis, client redis.Scripter, workers, batch int, timeout time.Duration) (*Pipeline, error) {
	if store == nil || client == nil {
		return nil, errors.New("ratelimit: pipeline needs a store and a client")
	}
	if workers < 0 || batch < 0 || timeout < 0 {
		return nil, fmt.Errorf("ratelimit: pipeline workers, batch and timeout must not be negative")
	}
	if batch > MaxPipelineBatch {
		return nil, fmt.Errorf("ratelimit: pipeline batch %d is over %d", batch, MaxPipelineBatch)
	}
	p := &Pipeline{store: store, client: client, batch: cmp.Or(batch, DefaultPipelineBatch),
		timeout: cmp.Or(timeout, DefaultPipelineTimeout), done: make(chan struct{})}
	p.calls = make(chan *call, p.batch*cmp.Or(workers, DefaultPipelineWorkers))
	for range cmp.Or(workers, DefaultPipelineWorkers) {
		p.wg.Add(1)
		go p.work()
	}
	return p, nil
}

// Close stops the workers; decisions still waiting fail.
func (p *Pipeline) Close() {
	p.once.Do(func() { close(p.done) })
	p.wg.Wait()
	for {
		select {
		case c := <-p.calls:
			c.d, c.err = Decision{Denied: -1}, errClosed
			close(c.ready)
		default:
			return
		}
	}
}

// Allow decides req in the next batch.
func (p *Pipeline) Allow(ctx context.Context, req *Request) (Decision, error) {
	if err := checkRequest(req); err != nil {
		return Decision{Denied: -1}, err
	}
	c := &call{ctx: ctx, req: req, ready: make(chan struct{})}
	select {
	case p.calls <- c:
	case <-ctx.Done():
		return Decision{Denied: -1}, fmt.Errorf("ratelimit: redis: %w", ctx.Err())
	case <-p.done:
		return Decision{Denied: -1}, errClosed
	}
	select {
	case <-c.ready:
		return c.d, c.err
	case <-ctx.Done():
		return Decision{Denied: -1}, fmt.Errorf("ratelimit: redis: %w", ctx.Err())
	}
}

func (p *Pipeline) work() {
	defer p.wg.Done()
	batch := make([]*call, 0, p.batch)
	for {
		select {
		case c := <-p.calls:
			batch = append(batch[:0], c)
		case <-p.done:
			return
		}
	drain:
		for len(batch) < p.batch {
			select {
			case c := <-p.calls:
				batch = append(batch, c)
			default:
				break drain
			}
		}
		p.send(batch)
	}
}

// send decides batch in one script run; every call is answered, with its
// Decision or the run's error.
func (p *Pipeline) send(batch []*call) {
	live := batch[:0]
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil { // its caller has given up: spend nothing on it
			c.d, c.err = Decision{Denied: -1}, fmt.Errorf("ratelimit: redis: %w", err)
			close(c.ready)
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	if p.onSend != nil {
		p.onSend(len(live))
	}
	b := p.store.newBatch(len(live))
	for _, c := range live {
		b.add(c.req)
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	err := p.store.run(ctx, p.client, b, func(i int, v []int64) ([]int64, error) {
		var err error
		live[i].d, v, err = decode(live[i].req, v)
		return v, err
	})
	for _, c := range live {
		if err != nil {
			c.d, c.err = Decision{Denied: -1}, err
		}
		close(c.ready)
	}
}
