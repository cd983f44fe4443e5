package procmetrics

import (
	"fmt"
	"strings"

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
// The provider creates a client series at its first call and, unlike its
// server side (ServerMetrics.InitializeMetrics), offers no way to create
// them earlier. Init makes them known instead: Collect sends a zero for
// every known series the provider has not created yet, from vecs of the
// provider's own names, help and labels that are never incremented, so a
// dashboard reads 0 from the start and the provider's series takes over
// at the first call.
type Client struct {
	m    *grpcprom.ClientMetrics
	zero zeroes
}

var _ prometheus.Collector = (*Client)(nil)

// zeroes are the never-incremented twins of the provider's vecs.
type zeroes struct {
	plain   []*prometheus.CounterVec // started, msg_received, msg_sent: grpc_type, grpc_service, grpc_method
	handled *prometheus.CounterVec   // grpc_client_handled_total: + grpc_code
	latency *prometheus.HistogramVec // grpc_client_handling_seconds
}

// The provider's label names, in its order (the order is part of a
// metric's descriptor, which the twins must share).
var (
	clientLabels     = []string{"grpc_type", "grpc_service", "grpc_method"}
	clientCodeLabels = []string{"grpc_type", "grpc_service", "grpc_method", "grpc_code"}
)

// handledName is the one client counter with a grpc_code label.
const handledName = "grpc_client_handled_total"

// NewClient registers the gRPC client metrics on reg.
func NewClient(reg prometheus.Registerer) (*Client, error) {
	// The options see the provider's final opts: the twins copy them.
	var counters []prometheus.CounterOpts
	var latency prometheus.HistogramOpts
	m := grpcprom.NewClientMetrics(
		grpcprom.WithClientCounterOptions(func(o *prometheus.CounterOpts) { counters = append(counters, *o) }),
		grpcprom.WithClientHandlingTimeHistogram(histogram(), func(o *prometheus.HistogramOpts) { latency = *o }),
	)
	c := &Client{m: m, zero: zeroes{latency: prometheus.NewHistogramVec(latency, clientLabels)}}
	for _, o := range counters {
		if o.Name == handledName {
			c.zero.handled = prometheus.NewCounterVec(o, clientCodeLabels)
		} else {
			c.zero.plain = append(c.zero.plain, prometheus.NewCounterVec(o, clientLabels))
		}
	}
	if c.zero.handled == nil || latency.Name == "" {
		return nil, fmt.Errorf("procmetrics: the gRPC client metrics have no %s or no latency histogram", handledName)
	}
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return c, nil
}

// DialOption adds the client metrics as the connection's innermost
// interceptor (after the chain's), so each attempt is counted.
func (c *Client) DialOption() grpc.DialOption { return grpc.WithChainUnaryInterceptor(c.unary()) }

func (c *Client) unary() grpc.UnaryClientInterceptor {
	return c.m.UnaryClientInterceptor(grpcprom.WithExemplarFromContext(Exemplar))
}

// Init makes every unary method of the named services known, with every
// code the provider reports (go-grpc-middleware's AllCodes), as the
// provider's server side does for the services a server registers. The
// names are full proto service names whose generated code is linked in;
// streaming methods are left out (the client chain is unary only).
func (c *Client) Init(services ...string) error {
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
			c.zero.init(string(grpcprom.Unary), name, string(md.Name()))
		}
	}
	return nil
}

func (z *zeroes) init(typ, service, method string) {
	for _, v := range z.plain {
		v.WithLabelValues(typ, service, method)
	}
	z.latency.WithLabelValues(typ, service, method)
	for _, code := range mw.AllCodes {
		z.handled.WithLabelValues(typ, service, method, code.String())
	}
}

// Describe sends the provider's descriptors (the twins share them).
func (c *Client) Describe(ch chan<- *prometheus.Desc) { c.m.Describe(ch) }

// Collect sends the provider's series, then the zero of every known
// series the provider has not created yet.
func (c *Client) Collect(ch chan<- prometheus.Metric) {
	seen := map[string]bool{}
	forward(c.m, func(m prometheus.Metric) { seen[seriesKey(m)] = true; ch <- m })
	forward(c.zero, func(m prometheus.Metric) {
		if !seen[seriesKey(m)] {
			ch <- m
		}
	})
}

// Collect sends every twin's series.
func (z zeroes) Collect(ch chan<- prometheus.Metric) {
	for _, v := range z.plain {
		v.Collect(ch)
	}
	z.handled.Collect(ch)
	z.latency.Collect(ch)
}

// forward calls f with every metric col collects.
func forward(col interface {
	Collect(chan<- prometheus.Metric)
}, f func(prometheus.Metric)) {
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
