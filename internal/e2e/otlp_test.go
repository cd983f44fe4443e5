package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/internal/testproc"
)

// otlpReceiver is a minimal OTLP/HTTP trace collector: it decodes each
// export request and remembers the service.name of every span's resource.
type otlpReceiver struct {
	mu       sync.Mutex
	services map[string]int // service.name -> spans
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" {
		http.NotFound(w, r)
		return
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	var req coltrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		name := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				name = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			o.services[name] += len(ss.GetSpans())
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (o *otlpReceiver) seen() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := make(map[string]int, len(o.services))
	for k, v := range o.services {
		m[k] = v
	}
	return m
}

// TestDevExportsOTLP: `portico dev` with OTEL_EXPORTER_OTLP_ENDPOINT set
// exports the spans of one POST /api/orders from all four processes, each
// under its own service.name.
func TestDevExportsOTLP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	recv := &otlpReceiver{services: map[string]int{}}
	col := httptest.NewServer(recv)
	defer col.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_always_on") // every trace, whatever the ratio
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")               // export within 100ms, not 5s
	base := testproc.FreePortRange(t, 10)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", testproc.TempDir(t))
	url := "http://" + testproc.Addr(base)
	testproc.WaitHTTP(t, dev, url+"/health")
	testproc.WaitDevReady(t, dev)
	// /health is UP only once the edge's API connections can carry a call,
	// so the first order must get through.
	r := call(t, "POST", url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: otlp-1")
	if r.status != 201 {
		t.Fatalf("POST /api/orders = %d %s", r.status, r.body)
	}
	want := []string{"portico-gateway", "portico-inventory", "portico-payment", "portico-order"}
	ok := testproc.WaitFor(t.Context(), 20*time.Second, func(ctxT) bool {
		got := recv.seen()
		for _, s := range want {
			if got[s] == 0 {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("spans by service.name = %v, want spans from each of %v", recv.seen(), want)
	}
}
