package retry_test

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/interceptors/retry"
)

// watchStub serves WatchOrder: attempt n (from 1) fails with fail[n-1]
// before any message when that is not nil; otherwise it sends msgs
// messages and then ends with after (nil: a clean end).
type watchStub struct {
	fail     []error
	msgs     int
	after    error
	attempts atomic.Int32
}

func (w *watchStub) watch(_ *orderv1.WatchOrderRequest, st orderv1.OrderService_WatchOrderServer) error {
	n := int(w.attempts.Add(1))
	if n <= len(w.fail) && w.fail[n-1] != nil {
		return w.fail[n-1]
	}
	for range w.msgs {
		if err := st.Send(&orderv1.Order{Id: "o-1"}); err != nil {
			return err
		}
	}
	return w.after
}

// watchAll opens WatchOrder through the stream retry interceptor and reads
// it to its end: the messages received and the final error (nil at a
// clean end).
func watchAll(t *testing.T, w *watchStub, opts ...retry.Option) (int, error) {
	t.Helper()
	target, dialer := stub.Serve(t, nil, &stub.Order{WatchOrderFunc: w.watch})
	opts = append([]retry.Option{retry.WithBackoff(10*time.Millisecond, 50*time.Millisecond)}, opts...)
	conn, err := grpc.NewClient(target, dialer, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStreamInterceptor(retry.StreamClientInterceptor(opts...)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := orderv1.NewOrderServiceClient(conn).WatchOrder(context.Background(), &orderv1.WatchOrderRequest{Id: "o-1"})
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		if _, err := st.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		n++
	}
}

func TestStreamRetriesOnlyBeforeFirstMessage(t *testing.T) {
	unavail := status.Error(codes.Unavailable, "down")
	tests := []struct {
		name         string
		stub         *watchStub
		maxAttempts  int
		wantMsgs     int
		wantCode     codes.Code
		wantAttempts int32
	}{
		{"fails twice then streams", &watchStub{fail: []error{unavail, unavail}, msgs: 3}, 3, 3, codes.OK, 3},
		{"fails more than the attempts", &watchStub{fail: []error{unavail, unavail, unavail}, msgs: 3}, 3, 0, codes.Unavailable, 3},
		{"not a transient code", &watchStub{fail: []error{status.Error(codes.NotFound, "no order")}, msgs: 1}, 3, 0, codes.NotFound, 1},
		{"fails after the first message", &watchStub{msgs: 2, after: unavail}, 3, 2, codes.Unavailable, 1},
		{"clean end with no message", &watchStub{}, 3, 0, codes.OK, 1},
		{"one attempt only", &watchStub{fail: []error{unavail}, msgs: 1}, 1, 0, codes.Unavailable, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := tt.stub
				n, err := watchAll(t, w, retry.WithMaxAttempts(tt.maxAttempts))
				if n != tt.wantMsgs || status.Code(err) != tt.wantCode {
					t.Errorf("got %d messages, err %v; want %d, %v", n, err, tt.wantMsgs, tt.wantCode)
				}
				if got := w.attempts.Load(); got != tt.wantAttempts {
					t.Errorf("attempts = %d, want %d", got, tt.wantAttempts)
				}
			})
		})
	}
}
