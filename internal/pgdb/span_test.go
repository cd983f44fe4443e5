package pgdb

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/internal/pgtest"
)

// TestInTxSpan: InTx's span is the SQLite stores' shape on PostgreSQL
// (telemetry.StartDB): one "postgresql tx" client span per call, a
// "retry" event per attempt after the first, a "rollback" event when fn
// refuses (not an error), status Error when the database fails.
func TestInTxSpan(t *testing.T) {
	db, err := Open(context.Background(), pgtest.New(t), "svc", testMigrations)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	refused := errors.New("refused")
	tests := []struct {
		name       string
		cancel     bool // the context ends before the transaction begins
		fn         func(run int, tx pgx.Tx) error
		wantEvents []string
		wantStatus codes.Code
	}{
		{name: "commit", fn: func(int, pgx.Tx) error { return nil }, wantStatus: codes.Unset},
		{name: "fn refuses", fn: func(int, pgx.Tx) error { return refused }, wantEvents: []string{"rollback"}, wantStatus: codes.Unset},
		{name: "lost connection, run again", fn: func(run int, tx pgx.Tx) error {
			if run > 1 {
				return nil
			}
			_, err := tx.Exec(context.Background(), `SELECT pg_terminate_backend(pg_backend_pid())`)
			return err
		}, wantEvents: []string{"retry"}, wantStatus: codes.Unset},
		{name: "begin fails", cancel: true, fn: func(int, pgx.Tx) error { return nil }, wantEvents: []string{"exception"}, wantStatus: codes.Error},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(context.Background())
			ctx, parent := tp.Tracer("test").Start(context.Background(), "handler")
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if tc.cancel {
				cancel()
			}
			run := 0
			_ = db.InTx(ctx, func(tx pgx.Tx) error { run++; return tc.fn(run, tx) })
			parent.End()
			spans := exp.GetSpans()
			if len(spans) != 2 {
				t.Fatalf("InTx exported %d spans (%v), want the tx span and its parent", len(spans), spans.Snapshots())
			}
			s := spans[0]
			var events []string
			for _, e := range s.Events {
				events = append(events, e.Name)
			}
			if s.Name != "postgresql tx" || s.SpanKind != trace.SpanKindClient || s.Parent.SpanID() != parent.SpanContext().SpanID() ||
				!hasAttr(s.Attributes, attribute.String("db.system.name", "postgresql")) {
				t.Errorf("span = %q kind %v attrs %v parent %v, want postgresql tx, client, db.system.name=postgresql, under the handler",
					s.Name, s.SpanKind, s.Attributes, s.Parent.SpanID())
			}
			if !slices.Equal(events, tc.wantEvents) || s.Status.Code != tc.wantStatus {
				t.Errorf("span events %v status %v, want %v %v", events, s.Status.Code, tc.wantEvents, tc.wantStatus)
			}
		})
	}
}

func hasAttr(attrs []attribute.KeyValue, want attribute.KeyValue) bool {
	for _, a := range attrs {
		if a == want {
			return true
		}
	}
	return false
}
