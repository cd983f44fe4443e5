package procmetrics

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	mw "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Client is a process's gRPC client metrics (grpc_client_*), one series
// per upstream service and method: installed inside the retry layer, it
// counts attempts. It is a prometheus.Collector: register it once.
//
// The metrics are go-grpc-middleware's (grpcprom.ClientMetrics): the same
// names, help, labels, buckets and exemplars, counted as its unary
// interceptor counts them. The interceptor is Portico's own so that a call
// costs no label hashing: the first call of a method resolves the method's
// series once and caches them (see series).
//
// The provider creates a client series at its first call and, unlike its
// server side (ServerMetrics.InitializeMetrics), offers no way to create
// them earlier. Init makes them known instead: Collect sends a zero for
// every known series not created by a call yet, from twin vecs that are
// never incremented, so a dashboard reads 0 from the start and the live
// series takes over at the first call.
type Client struct {
	live vecs // what calls update
	zero vecs // the never-incremented twins Init fills

	// methods maps a full method name to its *series. It holds one entry
	// per method this process has called, so it is bounded like the vecs
	// themselves: by the upstream methods the routes and clients name.
	methods sync.Map
}

var _ prometheus.Collector = (*Client)(nil)

// vecs are the client families, built from the provider's own opts.
type vecs struct {
	started  *prometheus.CounterVec   // grpc_type, grpc_service, grpc_method
	handled  *prometheus.CounterVec   // + grpc_code
	received *prometheus.CounterVec   // grpc_type, grpc_service, grpc_method
	sent     *prometheus.CounterVec   // grpc_type, grpc_service, grpc_method
	latency  *prometheus.HistogramVec // grpc_type, grpc_service, grpc_method
}

// The provider's label names, in its order (the order is part of a
// metric's descriptor, which the vecs must share with the provider's).
var (
	clientLabels     = []string{"grpc_type", "grpc_service", "grpc_method"}
	clientCodeLabels = []string{"grpc_type", "grpc_service", "grpc_method", "grpc_code"}
)

// The provider's counter names.
const (
	startedName  = "grpc_client_started_total"
	handledName  = "grpc_client_handled_total"
	receivedName = "grpc_client_msg_received_total"
	sentName     = "grpc_client_msg_sent_total"
)

// NewClient registers the gRPC client metrics on reg.
func NewClient(reg prometheus.Registerer) (*Client, error) {
	// The options see the provider's final opts: the vecs copy them.
	var counters []prometheus.CounterOpts
	var latency prometheus.HistogramOpts
	grpcprom.NewClientMetrics(clientOptions(
		func(o prometheus.CounterOpts) { counters = append(counters, o) },
		func(o prometheus.HistogramOpts) { latency = o },
	)...)
	live, err := newVecs(counters, latency)
	if err != nil {
		return nil, err
	}
	zero, _ := newVecs(counters, latency) // the same opts: no error
	c := &Client{live: live, zero: zero}
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return c, nil
}

// clientOptions are the provider options the metrics are made of; counter
// and latency receive the final opts of each counter and the histogram.
func clientOptions(counter func(prometheus.CounterOpts), latency func(prometheus.HistogramOpts)) []grpcprom.ClientMetricsOption {
	return []grpcprom.ClientMetricsOption{
		grpcprom.WithClientCounterOptions(func(o *prometheus.CounterOpts) { counter(*o) }),
		grpcprom.WithClientHandlingTimeHistogram(histogram(), func(o *prometheus.HistogramOpts) { latency(*o) }),
	}
}

// newVecs builds the families from the provider's opts.
func newVecs(counters []prometheus.CounterOpts, latency prometheus.HistogramOpts) (vecs, error) {
	v := vecs{latency: prometheus.NewHistogramVec(latency, clientLabels)}
	for _, o := range counters {
		switch o.Name {
		case startedName:
			v.started = prometheus.NewCounterVec(o, clientLabels)
		case handledName:
			v.handled = prometheus.NewCounterVec(o, clientCodeLabels)
		case receivedName:
			v.received = prometheus.NewCounterVec(o, clientLabels)
		case sentName:
			v.sent = prometheus.NewCounterVec(o, clientLabels)
		}
	}
	if v.started == nil || v.handled == nil || v.received == nil || v.sent == nil || latency.Name == "" {
		return vecs{}, fmt.Errorf("procmetrics: the gRPC client metrics lack a counter or the latency histogram")
	}
	return v, nil
}

// DialOption adds the client metrics as the connection's innermost
// interceptor (after the chain's), so each attempt is counted.
func (c *Client) DialOption() grpc.DialOption { return grpc.WithChainUnaryInterceptor(c.unary()) }

// unary counts a call as the provider's unary client interceptor does:
// started and msg_sent before the call, msg_received after a call that
// succeeded, then handled with the call's code and the handling time, all
// with the call's Exemplar.
func (c *Client) unary() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		ex := Exemplar(ctx)
		s := c.series(method)
		s.started.AddWithExemplar(1, ex)
		s.sent.AddWithExemplar(1, ex)
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil {
			s.receivedCounter(c.live.received).AddWithExemplar(1, ex)
		}
		s.handledCounter(c.live.handled, grpcprom.FromError(err).Code()).AddWithExemplar(1, ex)
		s.latencyObserver(c.live.latency).ObserveWithExemplar(time.Since(start).Seconds(), ex)
		return err
	}
}

// series returns the cached series of a full method, creating them at
// its first call.
func (c *Client) series(method string) *series {
	if s, ok := c.methods.Load(method); ok {
		return s.(*series)
	}
	s, _ := c.methods.LoadOrStore(method, newSeries(c.live, method))
	return s.(*series)
}

// Init makes every unary method of the named services known, with every
// code the provider reports (go-grpc-middleware's AllCodes), as the
// provider's server side does for the services a server registers. The
// names are full proto service names whose generated code is linked in;
// streaming methods are left out (the client chain is unary only).
func (c *Client) Init(services ...string) error { return c.zero.init(services...) }

func (z vecs) init(services ...string) error {
	for _, name := range services {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			return fmt.Errorf("procmetrics: service %s: %w", name, err)
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			return fmt.Errorf("procmetrics: %s is not a service", name)
		}
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i)
			if md.IsStreamingClient() || md.IsStreamingServer() {
				continue
			}
			z.initMethod(string(mw.Unary), name, string(md.Name()))
		}
	}
	return nil
}

func (z vecs) initMethod(typ, service, method string) {
	for _, v := range []*prometheus.CounterVec{z.started, z.received, z.sent} {
		v.WithLabelValues(typ, service, method)
	}
	z.latency.WithLabelValues(typ, service, method)
	for _, code := range mw.AllCodes {
		z.handled.WithLabelValues(typ, service, method, code.String())
	}
}

// Describe sends the provider's descriptors (live and twins share them).
func (c *Client) Describe(ch chan<- *prometheus.Desc) { c.live.Describe(ch) }

// Collect sends the live series, then the zero of every known series no
// call has created yet.
func (c *Client) Collect(ch chan<- prometheus.Metric) { merge(ch, c.live, c.zero) }

// Describe sends the families' descriptors in the provider's order.
func (v vecs) Describe(ch chan<- *prometheus.Desc) {
	v.started.Describe(ch)
	v.handled.Describe(ch)
	v.received.Describe(ch)
	v.sent.Describe(ch)
	v.latency.Describe(ch)
}

// Collect sends every series of the families in the provider's order.
func (v vecs) Collect(ch chan<- prometheus.Metric) {
	v.started.Collect(ch)
	v.handled.Collect(ch)
	v.received.Collect(ch)
	v.sent.Collect(ch)
	v.latency.Collect(ch)
}

type collector interface {
	Collect(chan<- prometheus.Metric)
}

// merge sends live's series, then zero's that live has not sent.
func merge(ch chan<- prometheus.Metric, live, zero collector) {
	seen := map[string]bool{}
	forward(live, func(m prometheus.Metric) { seen[seriesKey(m)] = true; ch <- m })
	forward(zero, func(m prometheus.Metric) {
		if !seen[seriesKey(m)] {
			ch <- m
		}
	})
}

// forward calls f with every metric col collects.
func forward(col collector, f func(prometheus.Metric)) {
	ch := make(chan prometheus.Metric, 64)
	go func() { col.Collect(ch); close(ch) }()
	for m := range ch {
		f(m)
	}
}

// seriesKey names a series: its descriptor (name, help, label names)
// and its label values, which Write gives in label-name order.
func seriesKey(m prometheus.Metric) string {
	var b strings.Builder
	b.WriteString(m.Desc().String())
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		return b.String()
	}
	for _, l := range out.GetLabel() {
		b.WriteByte(0)
		b.WriteString(l.GetValue())
	}
	return b.String()
}
