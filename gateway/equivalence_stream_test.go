package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/portico-gateway/portico/gateway/config"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// streamStubs makes the order service's streams answer by the request,
// the same on both paths: WatchOrder of "missing" fails before its first
// message, of "down" after one, of any other id sends PENDING then
// CONFIRMED; ExportOrders as CSV sends three chunks, as NDJSON one chunk
// then fails.
func streamStubs(h *harness) {
	unavailable := rpcerr.New(codes.Unavailable, "order.portico.dev", "", "down")
	h.order.watchOrder = func(r *orderv1.WatchOrderRequest, st grpc.ServerStreamingServer[orderv1.Order]) error {
		switch r.GetId() {
		case "missing":
			return rpcerr.New(codes.NotFound, "order.portico.dev", "ORDER_NOT_FOUND", "no such order")
		case "down":
			return watchSends(unavailable, orderv1.Order_STATUS_PENDING)(r, st)
		}
		return watchSends(nil, orderv1.Order_STATUS_PENDING, orderv1.Order_STATUS_CONFIRMED)(r, st)
	}
	h.order.exportOrders = func(r *orderv1.ExportOrdersRequest, st grpc.ServerStreamingServer[httpbody.HttpBody]) error {
		if r.GetFormat() == orderv1.ExportOrdersRequest_FORMAT_CSV {
			for _, c := range []string{"id,status\n", "o1,CONFIRMED\n", "o2,PENDING\n"} {
				if err := st.Send(&httpbody.HttpBody{ContentType: "text/csv; charset=utf-8", Data: []byte(c)}); err != nil {
					return err
				}
			}
			return nil
		}
		if err := st.Send(&httpbody.HttpBody{ContentType: "application/x-ndjson", Data: []byte(`{"id":"o1"}` + "\n")}); err != nil {
			return err
		}
		return unavailable
	}
}

// streamCorpus covers both streaming routes: each framing, a clean end,
// an error before and after the first message, the edge's own refusals.
var streamCorpus = []equivRequest{
	{"GET", "/api/orders/ord-1:watch", aliceToken, "", nil},
	{"GET", "/api/orders/ord-1:watch", aliceToken, "", []string{"Accept: application/x-ndjson"}},
	{"GET", "/api/orders/ord-1:watch", aliceToken, "", []string{"Accept: text/event-stream"}},
	{"GET", "/api/orders/down:watch", aliceToken, "", nil},
	{"GET", "/api/orders/down:watch", aliceToken, "", []string{"Accept: text/event-stream"}},
	{"GET", "/api/orders/missing:watch", aliceToken, "", nil},
	{"GET", "/api/orders/missing:watch", aliceToken, "", []string{"Accept: text/event-stream"}},
	{"GET", "/api/orders/ord-1:watch", aliceToken, "", []string{"Accept: text/html"}},
	{"GET", "/api/orders/ord-1:watch?nope=1", aliceToken, "", nil},
	{"GET", "/api/orders/ord-1:watch", aliceToken, "", []string{`If-None-Match: "x"`}},
	{"HEAD", "/api/orders/ord-1:watch", aliceToken, "", []string{"Accept: text/event-stream"}},
	{"GET", "/api/orders/ord-1:watch", "", "", nil},
	{"GET", "/api/orders:export?format=CSV", aliceToken, "", nil},
	{"GET", "/api/orders:export?format=FORMAT_CSV", aliceToken, "", nil},
	{"GET", "/api/orders:export", aliceToken, "", nil},
	{"GET", "/api/orders:export?format=BOGUS", aliceToken, "", nil},
}

// TestDescriptorPathStreamEquivalence: the server streams (WatchOrder in
// NDJSON and SSE, the HttpBody ExportOrders) answer the same status,
// headers and body bytes through the generated and the descriptor path
// (a descriptor set, and reflection), clean ends and terminal problems
// alike (issue 24 item 5).
func TestDescriptorPathStreamEquivalence(t *testing.T) {
	gen := newHarness(t, setup{})
	streamStubs(gen)
	for _, mode := range []string{"descriptors", "reflection"} {
		t.Run(mode, func(t *testing.T) {
			desc := newHarness(t, setup{cfg: func(c *config.Config) { toDescriptors(t, c, mode == "reflection") }})
			streamStubs(desc)
			if n := len(builtIn(desc.srv.snap.Load().cfg, registrations)); n != 0 {
				t.Fatalf("%d built-in registrations still serve: the descriptor path is not under test", n)
			}
			var streamed, terminal int
			for _, rq := range streamCorpus {
				a := gen.doCut(rq.method, rq.path, rq.token, rq.header...)
				b := desc.doCut(rq.method, rq.path, rq.token, rq.header...)
				if a.status == 200 && len(a.body) > 0 {
					streamed++
				}
				if bytes.Contains(a.body, []byte(`{"error":`)) || bytes.Contains(a.body, []byte("event: error")) || bytes.HasSuffix(a.body, []byte(cutMark)) {
					terminal++
				}
				if d := equivDiff(a, b); d != "" {
					t.Errorf("%s %s %v: generated and descriptor paths differ: %s", rq.method, rq.path, rq.header, d)
				}
			}
			if streamed < 6 || terminal < 3 {
				t.Errorf("%d streamed answers, %d terminal problems: the corpus lost its streams", streamed, terminal)
			}
		})
	}
}

// cutMark ends the body of an answer the edge cut (a raw stream failing
// after its first chunk has no terminal event: the edge aborts it).
const cutMark = "\n<cut>"

// doCut is do for a stream without a body: a body the edge cut short is
// what arrived followed by cutMark, not a failure.
func (h *harness) doCut(method, path, token string, header ...string) response {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, h.http.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, kv := range header {
		k, v, _ := strings.Cut(kv, ": ")
		req.Header.Add(k, v)
	}
	resp, err := h.http.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		b = append(b, cutMark...)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}
