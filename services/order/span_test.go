package order

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/pgdb"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// TestStoreSpans: both stores give Create and Update one span each in one
// shape (telemetry.StartDB), named for their database system, and a lost
// race in Update is a "conflict" event, not an error.
func TestStoreSpans(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		system := telemetry.SQLite
		if pgdb.IsURL(db) {
			system = telemetry.Postgres
		}
		store, err := open(context.Background(), db, Lease{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		defer tp.Shutdown(context.Background())
		ctx, parent := tp.Tracer("test").Start(context.Background(), "handler")
		r := testRecord("alice", "k1", 1)
		if _, err := store.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		next := r.clone()
		next.Order.Status = orderv1.Order_STATUS_CONFIRMED
		for range 2 { // the second finds the order moved on: a conflict
			_ = store.Update(ctx, next, orderv1.Order_STATUS_PENDING)
		}
		parent.End()
		type got struct {
			name   string
			events []string
			failed bool
		}
		want := []got{
			{name: system + " tx create order"},
			{name: system + " update order"},
			{name: system + " update order", events: []string{"conflict"}},
		}
		var spans []got
		for _, s := range exp.GetSpans() {
			if s.Name == "handler" {
				continue
			}
			if !slices.Contains(s.Attributes, attribute.String("db.system.name", system)) || s.Parent.SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("span %q: attributes %v, parent %v; want db.system.name=%s under the handler", s.Name, s.Attributes, s.Parent.SpanID(), system)
			}
			g := got{name: s.Name, failed: s.Status.Code != 0}
			for _, e := range s.Events {
				g.events = append(g.events, e.Name)
			}
			spans = append(spans, g)
		}
		if !slices.EqualFunc(spans, want, func(a, b got) bool {
			return a.name == b.name && a.failed == b.failed && slices.Equal(a.events, b.events)
		}) {
			t.Errorf("spans = %+v, want %+v", spans, want)
		}
	})
}
