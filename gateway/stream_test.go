package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/portico-gateway/portico/interceptors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gateway/config"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// watchSends is a WatchOrder stub that sends the order with each status,
// then returns end.
func watchSends(end error, sts ...orderv1.Order_Status) func(*orderv1.WatchOrderRequest, grpc.ServerStreamingServer[orderv1.Order]) error {
	return func(r *orderv1.WatchOrderRequest, st grpc.ServerStreamingServer[orderv1.Order]) error {
		for _, s := range sts {
			if err := st.Send(&orderv1.Order{Id: r.GetId(), Customer: "alice", Status: s}); err != nil {
				return err
			}
		}
		return end
	}
}

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct{ event, data string }

// parseSSE splits an SSE body into events, skipping comments.
func parseSSE(t *testing.T, body string) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		var ev sseEvent
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
		if ev.data != "" {
			out = append(out, ev)
		}
	}
	return out
}

func TestStreamFramings(t *testing.T) {
	unavailable := rpcerr.New(codes.Unavailable, "order.portico.dev", "", "down")
	tests := []struct {
		name   string
		accept string
		end    error
		sts    []orderv1.Order_Status
		want   string // the body with "ID" for the order id
		ctype  string
	}{
		{"ndjson", "", nil, []orderv1.Order_Status{orderv1.Order_STATUS_PENDING, orderv1.Order_STATUS_CONFIRMED},
			`{"result":{"status":"PENDING"}}` + "\n" + `{"result":{"status":"CONFIRMED"}}` + "\n", "application/x-ndjson"},
		{"sse", "text/event-stream", nil, []orderv1.Order_Status{orderv1.Order_STATUS_PENDING, orderv1.Order_STATUS_CONFIRMED},
			"message PENDING\nmessage CONFIRMED\nend {}\n", "text/event-stream; charset=utf-8"},
		{"ndjson error after a message", "application/x-ndjson", unavailable, []orderv1.Order_Status{orderv1.Order_STATUS_PENDING},
			`{"result":{"status":"PENDING"}}` + "\n" + `{"error":{"status":503}}` + "\n", "application/x-ndjson"},
		{"sse error after a message", "text/event-stream", unavailable, []orderv1.Order_Status{orderv1.Order_STATUS_PENDING},
			"message PENDING\nerror 503\n", "text/event-stream; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{})
			h.order.watchOrder = watchSends(tt.end, tt.sts...)
			var hdr []string
			if tt.accept != "" {
				hdr = append(hdr, "Accept: "+tt.accept)
			}
			resp := h.do("GET", "/api/orders/ord-1:watch", aliceToken, "", hdr...)
			if resp.status != http.StatusOK || resp.header.Get("Content-Type") != tt.ctype {
				t.Fatalf("GET :watch = %d %q, want 200 %q; body %s", resp.status, resp.header.Get("Content-Type"), tt.ctype, resp.body)
			}
			if got := streamSummary(t, tt.accept, resp.body); got != tt.want {
				t.Errorf("body summarized = %q, want %q\nbody: %s", got, tt.want, resp.body)
			}
			if md, _ := h.order.last(); len(md.Get("x-portico-subject")) == 0 {
				t.Errorf("upstream metadata %v has no subject", md)
			}
		})
	}
}

// streamSummary reduces a stream body to what the test compares: for NDJSON
// each line with only the order's status or the problem's status; for
// SSE one line per event, "<event> <status>".
func streamSummary(t *testing.T, accept string, body []byte) string {
	t.Helper()
	var b strings.Builder
	if accept == "text/event-stream" {
		for _, ev := range parseSSE(t, string(body)) {
			name := ev.event
			if name == "" {
				name = "message"
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
				t.Fatalf("event data %q: %v", ev.data, err)
			}
			switch name {
			case "message":
				b.WriteString("message " + m["status"].(string) + "\n")
			case "error":
				b.WriteString("error " + strconv.Itoa(int(m["status"].(float64))) + "\n")
			default:
				b.WriteString(name + " " + ev.data + "\n")
			}
		}
		return b.String()
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
		var m map[string]map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if r, ok := m["result"]; ok {
			b.WriteString(`{"result":{"status":"` + r["status"].(string) + `"}}` + "\n")
		}
		if e, ok := m["error"]; ok {
			b.WriteString(`{"error":{"status":` + strconv.Itoa(int(e["status"].(float64))) + `}}` + "\n")
		}
	}
	return b.String()
}

// openStream starts a GET of a stream and returns the response once its
// header is in; cancel hangs up.
func (h *harness) openStream(path, token, accept string) (*http.Response, context.CancelFunc) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	req, err := http.NewRequestWithContext(ctx, "GET", h.http.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := h.http.Client().Do(req)
	if err != nil {
		cancel()
		h.t.Fatalf("GET %s: %v", path, err)
	}
	h.t.Cleanup(func() { cancel(); resp.Body.Close() })
	return resp, cancel
}

// blockAfter is a WatchOrder stub that sends one PENDING order, reports
// the stream on started, and waits for its context, reporting when it
// ended on stopped.
func blockAfter(started chan<- struct{}, stopped chan<- time.Time) func(*orderv1.WatchOrderRequest, grpc.ServerStreamingServer[orderv1.Order]) error {
	return func(r *orderv1.WatchOrderRequest, st grpc.ServerStreamingServer[orderv1.Order]) error {
		if err := st.Send(&orderv1.Order{Id: r.GetId(), Status: orderv1.Order_STATUS_PENDING}); err != nil {
			return err
		}
		if started != nil {
			started <- struct{}{}
		}
		<-st.Context().Done()
		if stopped != nil {
			stopped <- time.Now()
		}
		return st.Context().Err()
	}
}

func TestStreamRefusals(t *testing.T) {
	notFound := rpcerr.New(codes.NotFound, "order.portico.dev", "ORDER_NOT_FOUND", "no such order")
	tests := []struct {
		name, accept string
		end          error
		wantStatus   int
		wantCode     string
	}{
		{"not the caller's order", "text/event-stream", notFound, 404, "ORDER_NOT_FOUND"},
		{"not found, ndjson", "", notFound, 404, "ORDER_NOT_FOUND"},
		{"json only", "application/json", nil, 406, "NOT_ACCEPTABLE"},
		{"html", "text/html", nil, 406, "NOT_ACCEPTABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{})
			h.order.watchOrder = watchSends(tt.end)
			var hdr []string
			if tt.accept != "" {
				hdr = append(hdr, "Accept: "+tt.accept)
			}
			resp := h.do("GET", "/api/orders/ord-1:watch", aliceToken, "", hdr...)
			if resp.status != tt.wantStatus || resp.header.Get("Content-Type") != "application/problem+json" || resp.json(t)["code"] != tt.wantCode {
				t.Fatalf("GET :watch = %d %q %s, want %d problem %s", resp.status, resp.header.Get("Content-Type"), resp.body, tt.wantStatus, tt.wantCode)
			}
		})
	}
}

// TestStreamConditional: If-Match and If-None-Match on a streaming route
// are 400 INVALID_CONDITIONAL_HEADER before any upstream call: a stream
// has no entity tag, and the edge will not pretend it checked one.
func TestStreamConditional(t *testing.T) {
	tests := []struct{ path, header, name string }{
		{"/api/orders/ord-1:watch", `If-None-Match: "x"`, "If-None-Match"},
		{"/api/orders/ord-1:watch", "If-None-Match: *", "If-None-Match"},
		{"/api/orders/ord-1:watch", `If-Match: "x"`, "If-Match"},
		{"/api/orders:export?format=CSV", `If-None-Match: "x"`, "If-None-Match"},
		{"/api/orders:export?format=CSV", "If-Match: *", "If-Match"},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.header, func(t *testing.T) {
			h := newHarness(t, setup{})
			var calls atomic.Int32
			h.order.watchOrder = func(*orderv1.WatchOrderRequest, grpc.ServerStreamingServer[orderv1.Order]) error {
				calls.Add(1)
				return nil
			}
			h.order.exportOrders = func(*orderv1.ExportOrdersRequest, grpc.ServerStreamingServer[httpbody.HttpBody]) error {
				calls.Add(1)
				return nil
			}
			resp := h.do("GET", tt.path, aliceToken, "", tt.header)
			body := resp.json(t)
			if resp.status != 400 || body["code"] != "INVALID_CONDITIONAL_HEADER" ||
				!strings.Contains(fmt.Sprint(body["detail"]), tt.name+" is not honoured on streams") {
				t.Fatalf("GET %s with %s = %d %s, want 400 INVALID_CONDITIONAL_HEADER on streams", tt.path, tt.header, resp.status, resp.body)
			}
			if n := calls.Load(); n != 0 {
				t.Errorf("upstream called %d times, want 0", n)
			}
		})
	}
}

func TestStreamExportRaw(t *testing.T) {
	h := newHarness(t, setup{})
	chunks := []string{"id,status\n", "o1,CONFIRMED\n", "o2,PENDING\n"}
	h.order.exportOrders = func(r *orderv1.ExportOrdersRequest, st grpc.ServerStreamingServer[httpbody.HttpBody]) error {
		if r.GetFormat() != orderv1.ExportOrdersRequest_FORMAT_CSV {
			return status.Error(codes.InvalidArgument, "want csv")
		}
		for _, c := range chunks {
			if err := st.Send(&httpbody.HttpBody{ContentType: "text/csv; charset=utf-8", Data: []byte(c)}); err != nil {
				return err
			}
		}
		return nil
	}
	resp := h.do("GET", "/api/orders:export?format=CSV", aliceToken, "")
	if resp.status != 200 || resp.header.Get("Content-Type") != "text/csv; charset=utf-8" || string(resp.body) != strings.Join(chunks, "") {
		t.Fatalf("GET :export = %d %q %q, want 200 text/csv %q", resp.status, resp.header.Get("Content-Type"), resp.body, strings.Join(chunks, ""))
	}
}

// TestStreamExportAccept checks that an export honours Accept as a watch
// does: 406 for a type it does not send; its format parameter, not
// Accept, chooses what it sends.
func TestStreamExportAccept(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.exportOrders = func(r *orderv1.ExportOrdersRequest, st grpc.ServerStreamingServer[httpbody.HttpBody]) error {
		ct := "application/x-ndjson"
		if r.GetFormat() == orderv1.ExportOrdersRequest_FORMAT_CSV {
			ct = "text/csv; charset=utf-8"
		}
		return st.Send(&httpbody.HttpBody{ContentType: ct, Data: []byte("x\n")})
	}
	tests := []struct {
		query, accept string
		status        int
	}{
		{"", "", 200},
		{"", "*/*", 200},
		{"", "application/x-ndjson", 200},
		{"", "text/csv", 406},
		{"", "text/event-stream", 406},
		{"", "application/json", 406},
		{"", "application/json, */*;q=0.1", 200},
		{"?format=CSV", "text/csv", 200},
		{"?format=CSV", "text/*", 200},
		{"?format=CSV", "application/x-ndjson", 406},
		{"?format=CSV", "text/csv;q=0, */*", 406},
	}
	for _, tt := range tests {
		var hdr []string
		if tt.accept != "" {
			hdr = []string{"Accept: " + tt.accept}
		}
		resp := h.do("GET", "/api/orders:export"+tt.query, aliceToken, "", hdr...)
		var p struct{ Code string }
		_ = json.Unmarshal(resp.body, &p)
		if resp.status != tt.status || tt.status == 406 && p.Code != "NOT_ACCEPTABLE" {
			t.Errorf("GET :export%s Accept %q = %d %s, want %d", tt.query, tt.accept, resp.status, resp.body, tt.status)
		}
	}
}

// TestStreamExportFormat checks the export's format parameter: the
// documented values only, and a 400 that lists them.
func TestStreamExportFormat(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.exportOrders = func(r *orderv1.ExportOrdersRequest, st grpc.ServerStreamingServer[httpbody.HttpBody]) error {
		return st.Send(&httpbody.HttpBody{ContentType: "text/csv; charset=utf-8", Data: []byte("x\n")})
	}
	for _, tt := range []struct {
		format string
		status int
	}{{"CSV", 200}, {"NDJSON", 200}, {"csv", 400}, {"UNSPECIFIED", 400}, {"FORMAT_UNSPECIFIED", 400}, {"XML", 400}} {
		resp := h.do("GET", "/api/orders:export?format="+tt.format, aliceToken, "")
		var p struct {
			Detail string
			Errors []struct{ Field, Detail string }
		}
		_ = json.Unmarshal(resp.body, &p)
		if resp.status != tt.status {
			t.Errorf("format=%s = %d %s, want %d", tt.format, resp.status, resp.body, tt.status)
		}
		if tt.status == 400 && (len(p.Errors) != 1 || p.Errors[0].Field != "format" || !strings.Contains(p.Detail, "want one of NDJSON, CSV ")) {
			t.Errorf("format=%s: %s, want errors[] naming format and the detail listing NDJSON, CSV only", tt.format, resp.body)
		}
	}
}

// TestStreamClientDisconnect hangs up mid-stream and waits for the order
// service's stream context to end; the time it took is logged (see
// BenchmarkStreamDisconnect for the distribution), not asserted.
func TestStreamClientDisconnect(t *testing.T) {
	for _, accept := range []string{"application/x-ndjson", "text/event-stream"} {
		t.Run(accept, func(t *testing.T) {
			h := newHarness(t, setup{})
			started, stopped := make(chan struct{}, 1), make(chan time.Time, 1)
			h.order.watchOrder = blockAfter(started, stopped)
			resp, cancel := h.openStream("/api/orders/ord-1:watch", aliceToken, accept)
			if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
				t.Fatalf("reading the first message: %v", err)
			}
			<-started
			hungUp := time.Now()
			cancel()
			select {
			case at := <-stopped:
				t.Logf("client disconnect reached the order service after %v", at.Sub(hungUp))
			case <-time.After(10 * time.Second):
				t.Fatal("the order service's stream was not cancelled within 10s of the client hanging up")
			}
		})
	}
}

func TestStreamUpstreamKilled(t *testing.T) {
	h := newHarness(t, setup{})
	started := make(chan struct{}, 1)
	h.order.watchOrder = blockAfter(started, nil)
	resp, _ := h.openStream("/api/orders/ord-1:watch", aliceToken, "text/event-stream")
	go func() { <-started; h.servers["order"].Stop() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	evs := parseSSE(t, string(body))
	last := evs[len(evs)-1]
	var p map[string]any
	if err := json.Unmarshal([]byte(last.data), &p); err != nil || last.event != "error" || p["status"] != float64(502) || p["code"] != "UPSTREAM_UNAVAILABLE" {
		t.Fatalf("last event = %+v (%v), want event: error with a 502 UPSTREAM_UNAVAILABLE problem", last, err)
	}
	t.Logf("terminal problem: %s", last.data)
}

func TestStreamShutdown(t *testing.T) {
	const n = 5
	h := newHarness(t, setup{})
	started := make(chan struct{}, n)
	h.order.watchOrder = blockAfter(started, nil)
	bodies := make([]io.ReadCloser, n)
	for i := range bodies {
		resp, _ := h.openStream("/api/orders/ord-1:watch", aliceToken, "text/event-stream")
		bodies[i] = resp.Body
	}
	for range n {
		<-started
	}
	h.srv.endStreams()
	for i, b := range bodies {
		body, err := io.ReadAll(b)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		evs := parseSSE(t, string(body))
		last := evs[len(evs)-1]
		if last.event != "error" || !strings.Contains(last.data, `"code":"STREAM_RECONNECT"`) {
			t.Errorf("stream %d ended with %+v, want event: error STREAM_RECONNECT", i, last)
		}
	}
}

func TestStreamCaps(t *testing.T) {
	tests := []struct {
		name       string
		streams    config.StreamsConfig
		wantStatus int
		wantCode   string
	}{
		{"per caller", config.StreamsConfig{MaxPerCaller: 1}, 429, "TOO_MANY_STREAMS"},
		{"edge", config.StreamsConfig{MaxOpen: 1}, 503, "OVERLOADED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{cfg: func(c *config.Config) { c.Streams = tt.streams }})
			started := make(chan struct{}, 1)
			h.order.watchOrder = blockAfter(started, nil)
			h.openStream("/api/orders/ord-1:watch", aliceToken, "")
			<-started
			resp := h.do("GET", "/api/orders/ord-1:watch", aliceToken, "")
			if resp.status != tt.wantStatus || resp.json(t)["code"] != tt.wantCode {
				t.Fatalf("second stream = %d %s, want %d %s", resp.status, resp.body, tt.wantStatus, tt.wantCode)
			}
		})
	}
}

// TestStreamSlowReader opens a stream that never reads: the edge must cut
// it after write_timeout and cancel the upstream call, having taken only
// what the sockets buffer.
func TestStreamSlowReader(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) { c.Streams.WriteTimeout = 200 * time.Millisecond }})
	stopped := make(chan int, 1)
	big := &orderv1.Order{Id: "ord-1", FailureReason: strings.Repeat("x", 60<<10)}
	h.order.watchOrder = func(r *orderv1.WatchOrderRequest, st grpc.ServerStreamingServer[orderv1.Order]) error {
		sent := 0
		for ; sent < 10000; sent++ { // 600 MB: far more than any socket buffer
			if err := st.Send(big); err != nil {
				break
			}
		}
		stopped <- sent
		return nil
	}
	h.openStream("/api/orders/ord-1:watch", aliceToken, "")
	select {
	case sent := <-stopped:
		if sent >= 10000 {
			t.Fatalf("the order service sent all %d messages to a client that reads nothing", sent)
		}
		t.Logf("upstream cancelled after %d messages of 60 KiB", sent)
	case <-time.After(15 * time.Second):
		t.Fatal("the upstream stream was not cancelled within 15s")
	}
}

// TestStreamBreakerOpens: streams to a dead upstream go through its client
// chain, so their failed setups open the upstream's breaker and the next
// stream is answered 503 CIRCUIT_OPEN before any byte of the stream.
func TestStreamBreakerOpens(t *testing.T) {
	ups := NewUpstreams(interceptors.WithLogger(discardLogger()))
	t.Cleanup(ups.Close)
	h := newHarness(t, setup{down: []string{"order"}, opts: []Option{WithUpstreams(ups)}})
	var answers []string
	for range 20 {
		resp := h.do("GET", "/api/orders/ord-1:watch", aliceToken, "", "Accept: text/event-stream")
		if resp.header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("GET :watch = %d %q, want a problem before any event", resp.status, resp.header.Get("Content-Type"))
		}
		code, _ := resp.json(t)["code"].(string)
		answers = append(answers, code)
		if code == "CIRCUIT_OPEN" {
			if resp.status != 503 || resp.header.Get("Retry-After") == "" {
				t.Errorf("CIRCUIT_OPEN answer = %d, Retry-After %q; want 503 with Retry-After", resp.status, resp.header.Get("Retry-After"))
			}
			t.Logf("answers until the breaker opened: %v", answers)
			return
		}
	}
	t.Fatalf("20 streams to a dead upstream never opened its breaker: %v", answers)
}
