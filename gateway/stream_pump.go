package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/answered"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/eventstream"
	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/problem"
)

// stream is one open server stream: its framing, counters and how it
// ended, for the access line. Only the handler's goroutine touches it.
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

// received is one RecvMsg's result.
type received struct {
	msg proto.Message
	err error
}

// run opens the upstream stream and pumps it to the client until either
// ends; cancel ends the upstream call, and run waits for its receiving
// goroutine before it returns.
func (st *stream) run(ctx context.Context, cancel context.CancelFunc, req proto.Message) {
	cc := st.w.ex.snap.upstreams[st.ep.Upstream].cc
	cs, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, st.ep.RPC)
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
	ch, done := make(chan received, 1), make(chan struct{})
	go func() {
		defer close(done)
		receive(ctx, cs, st.ep.Desc.Output(), ch)
	}()
	defer func() { cancel(); <-done }()
	st.pump(ctx, ch)
}

// receive hands each message of cs to ch until an error (io.EOF at a
// clean end) or ctx ends.
func receive(ctx context.Context, cs grpc.ClientStream, out protoreflect.MessageDescriptor, ch chan<- received) {
	for {
		m := jsonwire.NewMessage(out)
		err := cs.RecvMsg(m)
		select {
		case ch <- received{m, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// pump writes what arrives on ch, heartbeats between messages, and ends
// the stream on the first end: the upstream's, the client's, a bound's
// or the edge's shutdown.
func (st *stream) pump(ctx context.Context, ch <-chan received) {
	idle := time.NewTimer(st.ep.idleTimeout)
	defer idle.Stop()
	var beat <-chan time.Time
	if st.fr == eventstream.SSE && !st.raw && st.cfg.Heartbeat > 0 {
		t := time.NewTicker(st.cfg.Heartbeat)
		defer t.Stop()
		beat = t.C
	}
	for {
		select {
		case m := <-ch:
			if m.err != nil {
				st.fail(ctx, m.err)
				return
			}
			if !st.send(m.msg) {
				return
			}
			idle.Reset(st.ep.idleTimeout)
		case <-beat:
			if st.started && !st.write(st.fr.AppendHeartbeat(st.buf[:0])) {
				return
			}
		case <-idle.C:
			st.reconnect(endIdle, "The upstream sent nothing for "+st.ep.idleTimeout.String()+".")
			return
		case <-st.s.streamStop:
			st.reconnect(endShutdown, "The gateway is shutting down.")
			return
		case <-ctx.Done():
			st.fail(ctx, ctx.Err())
			return
		}
	}
}

// send writes one message; false when the stream must end.
func (st *stream) send(m proto.Message) bool {
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
	}
	st.messages++
	st.s.streamMetrics.messages.WithLabelValues(st.ep.Template).Inc()
	return st.write(frame)
}

// write sends b and flushes it within write_timeout; false (and the end
// recorded) when the client is gone or too slow. The deadline is set per
// write with http.ResponseController, so no server-wide WriteTimeout cuts
// a long stream, and a reader that takes nothing is cut after one.
func (st *stream) write(b []byte) bool {
	if len(b) > 0 {
		st.buf = b[:0] // keep the grown buffer for the next frame
	}
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
