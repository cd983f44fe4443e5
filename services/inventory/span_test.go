package inventory

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/portico-gateway/portico/internal/pgdb"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// TestInTxSpans: both stores give a transaction one span in one shape
// (telemetry.StartDB), named for the database system; a refusal by fn is
// a "rollback" event, not an error.
func TestInTxSpans(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		system := telemetry.SQLite
		if pgdb.IsURL(db) {
			system = telemetry.Postgres
		}
		store, err := open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		defer tp.Shutdown(context.Background())
		ctx, parent := tp.Tracer("test").Start(context.Background(), "handler")
		_ = store.InTx(ctx, func(Tx) error { return nil })
		_ = store.InTx(ctx, func(Tx) error { return errors.New("out of stock") })
		parent.End()
		var names, events []string
		for _, s := range exp.GetSpans() {
			if s.Name == "handler" {
				continue
			}
			names = append(names, s.Name)
			if !slices.Contains(s.Attributes, attribute.String("db.system.name", system)) || s.Status.Code != 0 ||
				s.Parent.SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("span %q: attributes %v, status %v, parent %v; want db.system.name=%s, no error, under the handler",
					s.Name, s.Attributes, s.Status, s.Parent.SpanID(), system)
			}
			for _, e := range s.Events {
				events = append(events, e.Name)
			}
		}
		if want := []string{system + " tx", system + " tx"}; !slices.Equal(names, want) || !slices.Equal(events, []string{"rollback"}) {
			t.Errorf("spans %v with events %v, want %v with one rollback", names, events, want)
		}
	})
}
