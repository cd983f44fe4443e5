package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of a Pipeline.
const (
	DefaultPipelineWorkers = 4
	DefaultPipelineBatch   = 64
	DefaultPipelineTimeout = time.Second
)

// Pipeline is the Redis store with concurrent decisions sent together:
// each worker takes the decisions waiting (up to Batch) and sends them in
// one pipeline, one script call each. Every decision is still one atomic
// script run on Redis's clock, in the order they reach Redis, so a
// Pipeline is as exact as Redis.Allow; it saves round trips and system
// calls, which is what bounds decisions per second from one edge. Build it
// with NewPipeline and stop it with Close.
type Pipeline struct {
	store   *Redis
	client  redis.Cmdable
	batch   int
	timeout time.Duration
	calls   chan *call
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

type call struct {
	req   *Request
	keys  []string
	args  []any
	d     Decision
	err   error
	ready chan struct{}
}

// NewPipeline starts workers (zero means DefaultPipelineWorkers) sending
// batches of up to batch decisions (zero means DefaultPipelineBatch) of
// store through client, each batch within timeout (zero means
// DefaultPipelineTimeout; a caller's shorter deadline still returns early).
func NewPipeline(store *Redis, client redis.Cmdable, workers, batch int, timeout time.Duration) (*Pipeline, error) {
	if store == nil || client == nil {
		return nil, errors.New("ratelimit: pipeline needs a store and a client")
	}
	if workers < 0 || batch < 0 || timeout < 0 {
		return nil, fmt.Errorf("ratelimit: pipeline workers, batch and timeout must not be negative")
	}
	p := &Pipeline{store: store, client: client, batch: cmpOr(batch, DefaultPipelineBatch),
		timeout: cmpOrDur(timeout, DefaultPipelineTimeout), done: make(chan struct{})}
	p.calls = make(chan *call, p.batch*cmpOr(workers, DefaultPipelineWorkers))
	for range cmpOr(workers, DefaultPipelineWorkers) {
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
			c.d, c.err = Decision{Denied: -1}, errors.New("ratelimit: pipeline closed")
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
	c := &call{req: req, ready: make(chan struct{})}
	c.keys, c.args = p.store.prepare(req)
	select {
	case p.calls <- c:
	case <-ctx.Done():
		return Decision{Denied: -1}, fmt.Errorf("ratelimit: redis: %w", ctx.Err())
	case <-p.done:
		return Decision{Denied: -1}, errors.New("ratelimit: pipeline closed")
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

// send runs one batch; calls that meet NOSCRIPT (a restarted server) load
// the script and run again one by one.
func (p *Pipeline) send(batch []*call) {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	pipe := p.client.Pipeline()
	cmds := make([]*redis.Cmd, len(batch))
	for i, c := range batch {
		cmds[i] = script.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx)
	for i, c := range batch {
		v, err := cmds[i].Int64Slice()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			v, err = script.Run(ctx, p.client, c.keys, c.args...).Int64Slice()
		}
		c.d, c.err = decode(c.req, v, err)
		close(c.ready)
	}
}
