package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/gateway/answered"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/eventstream"
	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/problem"
)

// stream is one open server stream: its framing, counters and how it
// ended, for the access line. The handler's goroutine uses it, and the
// heartbeat timer under mu.
type stream struct {
	s     *Server
	w     *responseWriter
	r     *http.Request
	ep    *endpoint
	fr    eventstream.Framing
	raw   bool // google.api.HttpBody chunks, written as they are
	cfg   config.StreamsConfig
	rc    *http.ResponseController
	start time.Time
	buf   []byte

	// mu serializes writes: the handler's, and the heartbeat timer's
	// until done. beat is that timer; endBy cancels the upstream call.
	mu    sync.Mutex
	done  bool
	beat  *time.Timer
	endBy context.CancelCauseFunc

	started  bool   // the status and first message are sent
	messages int64  // messages (or chunks) written
	end      string // how it ended: end, error, client_gone, ...
}

// framing names the stream's framing for the access line.
func (st *stream) framing() string {
	if st.raw {
		return "raw"
	}
	return st.fr.String()
}

// Causes the stream's own timers and the edge give when they end it.
var (
	errIdle     = errors.New("gateway: stream idle")
	errShutdown = errors.New("gateway: shutting down")
	errWrite    = errors.New("gateway: stream write failed") // a heartbeat's
)

// run opens the upstream stream and pumps it to the client until either
// ends. The handler's goroutine receives and writes each message itself:
// a stream holds no goroutine of the edge's beyond net/http's and
// grpc-go's. What must happen while it waits in RecvMsg (the idle
// timeout, heartbeats, the edge's shutdown) runs from timers and
// context.AfterFunc, which cancel the upstream call with a cause (so
// RecvMsg returns) or, for a heartbeat, write under mu.
func (st *stream) run(ctx context.Context, req proto.Message) {
	ctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	cc := st.w.ex.snap.upstreams[st.ep.Upstream].cc
	var opts []grpc.CallOption
	if st.raw {
		opts = append(opts, rawCodec)
	}
	cs, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, st.ep.RPC, opts...)
	if err == nil {
		if err = cs.SendMsg(req); errors.Is(err, io.EOF) {
			err = nil // the stream failed: RecvMsg returns its status
		}
	}
	if err == nil {
		err = cs.CloseSend()
	}
	if err != nil {
		st.fail(ctx, err)
		return
	}
	idle := time.AfterFunc(st.ep.idleTimeout, func() { end(errIdle) })
	defer idle.Stop()
	defer context.AfterFunc(st.s.streamStop, func() { end(errShutdown) })()
	if st.fr == eventstream.SSE && !st.raw && st.cfg.Heartbeat > 0 {
		st.mu.Lock()
		st.endBy, st.beat = end, time.AfterFunc(st.cfg.Heartbeat, st.heartbeat)
		st.mu.Unlock()
	}
	defer st.finish()
	st.pump(ctx, cs, idle)
}

// heartbeat writes a keep-alive comment (once the stream has started) and
// sets the next one; a failed write ends the stream.
func (st *stream) heartbeat() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return
	}
	if st.started && !st.write(keepAlive) {
		st.endBy(errWrite)
		return
	}
	st.beat.Reset(st.cfg.Heartbeat)
}

var keepAlive = eventstream.SSE.AppendHeartbeat(nil)

// finish stops heartbeats: after it nothing writes from a timer.
func (st *stream) finish() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.done = true
	if st.beat != nil {
		st.beat.Stop()
	}
}

// pump receives each message of cs into one reused message and writes it,
// until the upstream ends or ctx does (its cause says why).
func (st *stream) pump(ctx context.Context, cs grpc.ClientStream, idle *time.Timer) {
	var m proto.Message
	var into any // what RecvMsg decodes into
	if st.raw {
		rc := new(rawChunk)
		m, into = &rc.Body, rc
	} else {
		m = jsonwire.NewMessage(st.ep.Desc.Output())
		into = m
	}
	for {
		if !st.raw {
			proto.Reset(m)
		}
		err := cs.RecvMsg(into)
		if err == nil && !st.locked(func() bool { return st.send(m) }) {
			return
		}
		if err != nil {
			st.locked(func() bool { st.ended(ctx, err); return false })
			return
		}
		idle.Reset(st.ep.idleTimeout)
	}
}

// locked runs f under mu, which serializes the handler's writes with the
// heartbeats'; a panic in f (a raw stream cut) releases it.
func (st *stream) locked(f func() bool) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return f()
}

// ended ends the stream on RecvMsg's error, by the cause of ctx when the
// edge ended it.
func (st *stream) ended(ctx context.Context, err error) {
	switch context.Cause(ctx) {
	case errIdle:
		st.reconnect(endIdle, "The upstream sent nothing for "+st.ep.idleTimeout.String()+".")
	case errShutdown:
		st.reconnect(endShutdown, "The gateway is shutting down.")
	case errWrite: // the heartbeat's write recorded the end
	default:
		st.fail(ctx, err)
	}
}

// send writes one message; false when the stream must end.
func (st *stream) send(m proto.Message) bool {
	if !st.started && st.raw && !st.acceptable(m.(*httpbody.HttpBody).GetContentType()) {
		return false
	}
	if !st.started {
		h := st.w.Header()
		h.Set("Content-Type", st.fr.ContentType())
		if st.raw {
			h.Set("Content-Type", m.(*httpbody.HttpBody).GetContentType())
		}
		h.Set("X-Accel-Buffering", "no") // nginx and others: do not buffer the stream
		st.w.WriteHeader(http.StatusOK)
		st.started = true
	}
	var frame []byte
	if b, ok := m.(*httpbody.HttpBody); ok && st.raw {
		frame = b.GetData()
	} else {
		js, err := jsonwire.NewMarshaler().Marshal(m)
		if err != nil {
			st.fail(context.Background(), err)
			return false
		}
		frame = st.fr.AppendMessage(st.buf[:0], js)
		st.buf = frame[:0] // keep the grown buffer for the next frame
	}
	st.messages++
	st.s.streamMetrics.messages.WithLabelValues(st.ep.Template).Inc()
	return st.write(frame)
}

// acceptable reports whether Accept allows a raw stream's content type ct,
// which the edge learns from the first chunk; if not, the answer is 406
// and the upstream call is cancelled. The edge never rewrites a request by
// Accept: the operation's own parameters (an export's format) choose what
// it sends, and Accept only refuses what the client cannot take, as a
// watch's negotiation does.
func (st *stream) acceptable(ct string) bool {
	if eventstream.Accepts(st.r.Header.Values("Accept"), ct) {
		return true
	}
	st.end = endError
	st.terminal(problem.New(problem.CodeNotAcceptable, "This request streams "+ct+
		" and Accept does not allow it; the operation's query parameters choose what it streams (an export: format=NDJSON for "+
		eventstream.MediaNDJSON+", format=CSV for text/csv)."))
	return false
}

// write sends b and flushes it within write_timeout; false (and the end
// recorded) when the client is gone or too slow. The deadline is set per
// write with http.ResponseController, so no server-wide WriteTimeout cuts
// a long stream, and a reader that takes nothing is cut after one.
func (st *stream) write(b []byte) bool {
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.cfg.WriteTimeout))
	_, _ = st.w.Write(b)
	err := st.w.ex.writeErr
	if err == nil {
		err = st.rc.Flush()
	}
	if err == nil {
		return true
	}
	st.end = endClientGone
	if errors.Is(err, http.ErrHandlerTimeout) || isTimeout(err) {
		st.end = endSlowReader
	}
	if st.w.ex.writeErr == nil {
		st.w.ex.writeErr = err
	}
	return false
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// fail ends the stream on err: the upstream's error, or the stream's
// context. Before the first message it is the usual problem answer; after
// it, the framing's terminal error. A client that hung up gets nothing.
func (st *stream) fail(ctx context.Context, err error) {
	switch {
	case errors.Is(err, io.EOF):
		st.end = endClean
		if st.started {
			st.write(st.fr.AppendEnd(st.buf[:0]))
		}
		return
	case st.r.Context().Err() != nil:
		st.end = endClientGone
		st.w.ex.code = problem.CodeClientClosedRequest
		return
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		st.reconnect(endMaxDuration, "The stream reached its longest duration, "+st.ep.maxDuration.String()+".")
		return
	}
	st.end = endError
	if ex := st.w.ex; st.started && ex.answered != nil && !ex.answered.Trailer() {
		// The upstream's headers came long ago; no status followed: the
		// connection broke off (a killed service), which is 502
		// UPSTREAM_UNAVAILABLE, not an answer of the service's.
		ex.answered = &answered.Record{}
	}
	st.terminal(st.s.problemFor(st.w.ex, err))
}

// reconnect ends the stream with STREAM_RECONNECT.
func (st *stream) reconnect(end, why string) {
	st.end = end
	p := problem.New(problem.CodeStreamReconnect, why+" Open the stream again.")
	p.RetryAfter = 1
	st.terminal(p)
}

// terminal sends p: as the answer before the first message, else as the
// framing's error frame (for a raw export, nothing can follow the bytes:
// the stream is cut, so the client sees a truncated body).
func (st *stream) terminal(p *problem.Problem) {
	if !st.started {
		st.s.writeProblem(st.w, st.r, p)
		return
	}
	st.s.completeProblem(st.r, p)
	if st.raw {
		st.w.ex.logErr = p.Code + ": " + p.Detail
		panic(http.ErrAbortHandler)
	}
	js := p.JSON()
	st.write(st.fr.AppendError(st.buf[:0], js[:len(js)-1])) // without its newline
}
