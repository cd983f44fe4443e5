package payment

import (
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/grpcserver"
	"github.com/portico-gateway/portico/internal/grpctest"
	"github.com/portico-gateway/portico/internal/sqlitedb"
	"github.com/portico-gateway/portico/internal/testproc"
)

// TestPaymentMethodNotLogged: a payment method from the request never
// reaches a log line nor the error, whose message the access line logs. An
// unknown method was echoed in the status message ("unknown payment method
// <what the client sent>"), so a card number sent as a method was logged.
func TestPaymentMethodNotLogged(t *testing.T) {
	const secret = "pm_4242424242424242_cvc_123"
	var logs testproc.Buffer // safe for the server's goroutines
	l := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store, err := open(t.Context(), sqlitedb.Memory)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	svc, err := New(store, WithLogger(l))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv, err := grpcserver.New(grpcserver.Config{
		Service: paymentv1.PaymentService_ServiceDesc.ServiceName, Logger: l, TrustMetadata: true,
	})
	if err != nil {
		t.Fatalf("grpcserver.New: %v", err)
	}
	paymentv1.RegisterPaymentServiceServer(srv.GRPC(), svc)
	client := paymentv1.NewPaymentServiceClient(grpctest.Serve(t, srv.GRPC()))

	_, err = client.CreatePayment(keyed(t, "k"), charge("o1", 100, secret))
	checkErr(t, "CreatePayment", err, codes.InvalidArgument, reasonUnknownPaymentMethod)
	if echoes(err, secret) {
		t.Errorf("CreatePayment(method %q) error = %v, want the method left out", secret, err)
	}
	if d := badFields(err); len(d) != 1 || d[0] != "payment_method" {
		t.Errorf("CreatePayment(method %q) bad fields = %v, want [payment_method]", secret, d)
	}
	// The access line is written before the answer is sent.
	out := logs.String()
	if !strings.Contains(out, "CreatePayment") {
		t.Fatalf("no access line for CreatePayment in the logs:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Errorf("the logs hold the payment method %q:\n%s", secret, out)
	}
}
