package gateway

import "github.com/prometheus/client_golang/prometheus"

// streamMetrics are the server-streaming routes' series: streams open,
// messages sent, and how long streams lasted by how they ended.
type streamMetrics struct {
	open     *prometheus.GaugeVec
	messages *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newStreamMetrics(reg prometheus.Registerer) (*streamMetrics, error) {
	m := &streamMetrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "portico_gateway_streams_open",
			Help: "Streams (NDJSON, Server-Sent Events, exports) open now, by route.",
		}, []string{"route"}),
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portico_gateway_stream_messages_total",
			Help: "Messages (or export chunks) sent to stream clients, by route.",
		}, []string{"route"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "portico_gateway_stream_duration_seconds",
			Help:    "How long streams stayed open, by route and how they ended (end, error, client_gone, slow_reader, idle, max_duration, shutdown).",
			Buckets: []float64{0.1, 1, 10, 60, 300, 1800, 3600, 4 * 3600},
		}, []string{"route", "end"}),
	}
	for _, c := range []prometheus.Collector{m.open, m.messages, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
