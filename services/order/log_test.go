package order

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// logRecord is one log line as a logRecorder saw it.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// logRecorder is a slog.Handler that keeps every record, for tests that
// check what was logged.
type logRecorder struct {
	mu      sync.Mutex
	records []logRecord
}

var _ slog.Handler = (*logRecorder)(nil)

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, rec)
	return nil
}

func (l *logRecorder) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = nil
}

// all returns the records kept so far.
func (l *logRecorder) all() []logRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]logRecord(nil), l.records...)
}

// last returns the last record match accepts.
func (l *logRecorder) last(match func(logRecord) bool) (logRecord, bool) {
	recs := l.all()
	for i := len(recs) - 1; i >= 0; i-- {
		if match(recs[i]) {
			return recs[i], true
		}
	}
	return logRecord{}, false
}

func TestStatusName(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"order confirmed", statusName(orderv1.Order_STATUS_CONFIRMED), "CONFIRMED"},
		{"order pending", statusName(orderv1.Order_STATUS_PENDING), "PENDING"},
		{"order unspecified", statusName(orderv1.Order_STATUS_UNSPECIFIED), "UNSPECIFIED"},
		{"order unknown number", statusName(orderv1.Order_Status(42)), "42"},
		{"payment refunded", paymentStatusName(paymentv1.Payment_STATUS_REFUNDED), "REFUNDED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("statusName() = %q, want %q", tt.got, tt.want)
			}
		})
	}
}

// TestLogsShortStatus: log lines name statuses as the API does, CONFIRMED,
// never the enum's STATUS_CONFIRMED.
func TestLogsShortStatus(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		reconcile  bool // leave the order PENDING, then reconcile it
		wantMsg    string
		wantStatus string
	}{
		{name: "confirmed", method: "pm_card_ok", wantMsg: "order settled", wantStatus: "CONFIRMED"},
		{name: "declined", method: "pm_card_declined", wantMsg: "order settled", wantStatus: "FAILED"},
		{name: "reconciled", method: "pm_card_ok", reconcile: true, wantMsg: "reconciled", wantStatus: "CONFIRMED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logs := &logRecorder{}
				h := newHarness(t, WithLogger(slog.New(logs)))
				if tt.reconcile {
					pendingOrder(t, h, tt.method)
					time.Sleep(time.Minute)
					if n, err := h.svc.Reconcile(context.Background()); n != 1 || err != nil {
						t.Fatalf("Reconcile() = %d, %v; want 1, nil", n, err)
					}
				} else {
					_, _ = h.client.CreateOrder(alice(t, "k1"), orderReq(tt.method, "keyboard-001", 1))
				}
				r, ok := logs.last(func(r logRecord) bool { return r.msg == tt.wantMsg })
				if !ok || r.attrs["status"] != tt.wantStatus {
					t.Errorf("last %q line = %+v (found %v); want status %q", tt.wantMsg, r, ok, tt.wantStatus)
				}
				for _, r := range logs.all() {
					for k, v := range r.attrs {
						if strings.HasPrefix(v, "STATUS_") {
							t.Errorf("%q logs %s=%q; want the short name", r.msg, k, v)
						}
					}
				}
			})
		})
	}
}
