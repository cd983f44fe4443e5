package gateway

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/gateway/answered"
	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/eventstream"
	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/shed"
	"github.com/portico-gateway/portico/internal/traceid"
)

// serveStream answers a server-streaming route, after the pipeline's
// authentication, rate limit, route and policy steps:
//
//	negotiate  406 NOT_ACCEPTABLE: Accept names neither framing
//	admit      429 TOO_MANY_STREAMS (the caller's cap), 503 OVERLOADED
//	           (the edge's cap: streams.max_open)
//	bind       400: path and query into the request message
//	open       the upstream stream, within max_duration; an error before
//	           the first message is the usual problem with its status
//	pump       each message as it arrives, one write each (bounded by
//	           write_timeout); then a clean end, or a terminal problem
//
// A stream holds no slot of the shed caps and has no route timeout. The
// edge keeps at most one message of a stream in hand: the handler's
// goroutine receives a message and writes it before it receives the next
// (an export's chunks into one reused buffer, stream_chunk.go), so a slow
// reader stops the upstream stream (gRPC flow control) rather than filling
// the edge's memory; a reader too slow for write_timeout is cut and its
// upstream call cancelled.
func (s *Server) serveStream(w *responseWriter, r *http.Request, ep *endpoint) {
	ex, cfg := w.ex, w.ex.snap.cfg.Streams
	if p := streamPreconditions(r); p != nil {
		s.writeProblem(w, r, p)
		return
	}
	fr, raw := eventstream.NDJSON, ep.Desc.Output().FullName() == httpBodyName
	if !raw {
		var ok bool
		if fr, ok = eventstream.Negotiate(r.Header.Values("Accept")); !ok {
			s.writeProblem(w, r, problem.New(problem.CodeNotAcceptable,
				"This operation streams "+eventstream.MediaNDJSON+" or "+eventstream.MediaSSE+"; Accept allows neither."))
			return
		}
	}
	release, p := s.streams.open(ex.principal, cfg, ex.snap.shed.retryAfter)
	if p != nil {
		s.writeProblem(w, r, p)
		return
	}
	defer release()
	req, p := streamRequest(r, ep)
	if p != nil {
		s.writeProblem(w, r, p)
		return
	}
	if r.Method == http.MethodHead { // the headers a GET would get, no stream
		w.Header().Set("Content-Type", fr.ContentType())
		w.WriteHeader(http.StatusOK)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), ep.maxDuration)
	defer cancel()
	ctx, rec := answered.NewContext(ctx)
	ex.answered = rec
	ctx = traceid.Outgoing(metadata.NewOutgoingContext(ctx, s.annotate(ctx, r)))
	st := &stream{s: s, w: w, r: r, ep: ep, fr: fr, raw: raw, cfg: cfg, rc: http.NewResponseController(w), start: time.Now()}
	ex.stream = st
	open := s.streamMetrics.open.WithLabelValues(ep.Template)
	open.Inc()
	defer open.Dec()
	st.run(ctx, req)
	s.streamMetrics.duration.WithLabelValues(ep.Template, st.end).Observe(time.Since(st.start).Seconds())
}

const httpBodyName = "google.api.HttpBody"

var _ = httpbody.HttpBody{} // the chunk type of raw streams, linked in

// streamRequest binds the path variables and the query into the RPC's
// request message, as grpc-gateway's generated handlers do.
func streamRequest(r *http.Request, ep *endpoint) (proto.Message, *problem.Problem) {
	query, p := checkQuery(ep, r.URL.RawQuery)
	if p != nil {
		return nil, p
	}
	msg, ok := bindRequest(ep, r.URL.Path, query)
	if !ok {
		return nil, problem.New(problem.CodeInvalidArgument, "The request does not fit the operation's parameters.")
	}
	return msg, nil
}

// bindRequest builds ep's request message from the unescaped URL path's
// variables and query (as checkQuery forwards it), the way grpc-gateway's
// generated handlers bind a request without a body; ok is false when they
// do not fit the message.
func bindRequest(ep *endpoint, path, query string) (_ proto.Message, ok bool) {
	msg := jsonwire.NewMessage(ep.Input)
	vals, ok := ep.Values(path)
	if !ok {
		return nil, false
	}
	var seqs [][]string
	for i, v := range ep.Vars {
		if err := runtime.PopulateFieldFromPath(msg, v, vals[i]); err != nil {
			return nil, false
		}
		seqs = append(seqs, []string{v})
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, false
	}
	if err := runtime.PopulateQueryParameters(msg, q, utilities.NewDoubleArray(seqs)); err != nil {
		return nil, false
	}
	return msg, true
}

// streamCounts are the streams open at the edge, in all and per caller;
// they outlive reloads, each snapshot giving the caps.
type streamCounts struct {
	total   atomic.Int64
	callers shed.Keyed
}

// open takes a stream slot of the edge and one of p's, or returns the
// refusal.
func (c *streamCounts) open(p auth.Principal, cfg config.StreamsConfig, retryAfter int) (func(), *problem.Problem) {
	if n := c.total.Add(1); cfg.MaxOpen > 0 && n > int64(cfg.MaxOpen) {
		c.total.Add(-1)
		pr := problem.New(problem.CodeOverloaded, "The gateway has "+strconv.Itoa(cfg.MaxOpen)+" streams open, the most it keeps at once; retry after Retry-After.")
		pr.RetryAfter = retryAfter
		return nil, pr
	}
	key := p.Tenant + "/" + p.Subject
	if !c.callers.TryAcquire(key, cfg.MaxPerCaller) {
		c.total.Add(-1)
		pr := problem.New(problem.CodeTooManyStreams, "This caller has "+strconv.Itoa(cfg.MaxPerCaller)+" streams open, the most the gateway keeps for one caller.")
		pr.RetryAfter = retryAfter
		return nil, pr
	}
	return func() { c.callers.Release(key); c.total.Add(-1) }, nil
}

// endStreams ends every open stream with STREAM_RECONNECT (shutdown).
func (s *Server) endStreams() { s.stopStreams() }

// Ends of a stream, for the access line and the duration metric.
const (
	endClean       = "end"
	endError       = "error"        // a terminal problem from the upstream or the edge
	endClientGone  = "client_gone"  // the client hung up
	endSlowReader  = "slow_reader"  // a write did not finish within write_timeout
	endIdle        = "idle"         // no upstream message within idle_timeout
	endMaxDuration = "max_duration" // the stream reached max_duration
	endShutdown    = "shutdown"     // the edge is stopping
)
