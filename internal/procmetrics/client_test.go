package procmetrics

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// value is the value of the series name{labels} in reg (a histogram's
// sample count), and whether it exists. Gather must succeed: the zeros
// and the provider's series share one family without duplicates.
func value(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metrics
				}
			}
			return metricValue(m), true
		}
	}
	return 0, false
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}

// TestClientInit: after Init every unary method of the service reads 0 in
// every client family (every code for the handled counter) before any
// call; after a call the provider's series take over for that method
// alone, and the rest still read 0.
func TestClientInit(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := NewClient(reg)
	if err != nil {
		t.Fatal(err)
	}
	svc := inventoryv1.InventoryService_ServiceDesc.ServiceName
	if err := c.Init(svc); err != nil {
		t.Fatalf("Init(%s) = %v", svc, err)
	}
	series := func(method string) map[string]string {
		return map[string]string{"grpc_type": "unary", "grpc_service": svc, "grpc_method": method}
	}
	coded := func(method, code string) map[string]string {
		l := series(method)
		l["grpc_code"] = code
		return l
	}
	before := []struct {
		name   string
		labels map[string]string
	}{
		{"grpc_client_started_total", series("GetItem")},
		{"grpc_client_msg_sent_total", series("ReserveStock")},
		{"grpc_client_msg_received_total", series("ReleaseReservation")},
		{"grpc_client_handling_seconds", series("CreateItem")},
		{"grpc_client_handled_total", coded("GetItem", "OK")},
		{"grpc_client_handled_total", coded("ReserveStock", "Unavailable")},
		{"grpc_client_handled_total", coded("ListItems", "DataLoss")},
	}
	for _, s := range before {
		if v, ok := value(t, reg, s.name, s.labels); !ok || v != 0 {
			t.Errorf("before any call: %s%v = %v (present %v), want 0", s.name, s.labels, v, ok)
		}
	}

	fail := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		return status.Error(codes.Unavailable, "down")
	}
	_ = c.unary()(context.Background(), inventoryv1.InventoryService_GetItem_FullMethodName, nil, nil, nil, fail)

	after := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"grpc_client_started_total", series("GetItem"), 1},
		{"grpc_client_handled_total", coded("GetItem", "Unavailable"), 1},
		{"grpc_client_handled_total", coded("GetItem", "OK"), 0},
		{"grpc_client_handling_seconds", series("GetItem"), 1},
		{"grpc_client_msg_received_total", series("GetItem"), 0}, // a failed call receives nothing
		{"grpc_client_started_total", series("ReserveStock"), 0},
		{"grpc_client_handled_total", coded("ReserveStock", "Unavailable"), 0},
	}
	for _, s := range after {
		if v, ok := value(t, reg, s.name, s.labels); !ok || v != s.want {
			t.Errorf("after one failed GetItem: %s%v = %v (present %v), want %v", s.name, s.labels, v, ok, s.want)
		}
	}
}

func TestClientInitUnknownService(t *testing.T) {
	c, err := NewClient(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Init("portico.nowhere.v1.Nothing"); err == nil {
		t.Error("Init(unknown service) = nil, want an error")
	}
}

// TestClientUnarySeries pins what one successful unary call exports, with
// no Init: exactly these series of these families, each with these labels
// and a count of 1 (the histogram's sample count), and nothing else.
func TestClientUnarySeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := NewClient(reg)
	if err != nil {
		t.Fatal(err)
	}
	ok := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	if err := c.unary()(context.Background(), inventoryv1.InventoryService_GetItem_FullMethodName, nil, nil, nil, ok); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		`grpc_client_started_total{grpc_method="GetItem",grpc_service="portico.inventory.v1.InventoryService",grpc_type="unary"}`:                1,
		`grpc_client_msg_sent_total{grpc_method="GetItem",grpc_service="portico.inventory.v1.InventoryService",grpc_type="unary"}`:               1,
		`grpc_client_msg_received_total{grpc_method="GetItem",grpc_service="portico.inventory.v1.InventoryService",grpc_type="unary"}`:           1,
		`grpc_client_handled_total{grpc_code="OK",grpc_method="GetItem",grpc_service="portico.inventory.v1.InventoryService",grpc_type="unary"}`: 1,
		`grpc_client_handling_seconds{grpc_method="GetItem",grpc_service="portico.inventory.v1.InventoryService",grpc_type="unary"}`:             1,
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			key := f.GetName() + "{"
			for i, l := range m.GetLabel() { // sorted by name
				if i > 0 {
					key += ","
				}
				key += l.GetName() + `="` + l.GetValue() + `"`
			}
			got[key+"}"] = metricValue(m)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series after one successful GetItem (-want +got):\n%s", diff)
	}
}
