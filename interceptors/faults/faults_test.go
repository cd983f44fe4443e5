package faults_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func handler(ran *int) grpc.UnaryHandler {
	return func(context.Context, any) (any, error) {
		*ran++
		return "ok", nil
	}
}

func info(method string) *grpc.UnaryServerInfo { return &grpc.UnaryServerInfo{FullMethod: method} }

func TestNoRulesPassThrough(t *testing.T) {
	var ran int
	ic := faults.UnaryServerInterceptor(nil)
	if _, err := ic(context.Background(), nil, info(createOrder), handler(&ran)); err != nil || ran != 1 {
		t.Errorf("no rules: err %v, handler ran %d times; want nil, 1", err, ran)
	}
}

func TestInjectsErrorsByMethodAndRate(t *testing.T) {
	const getOrder = "/portico.order.v1.OrderService/GetOrder"
	tests := []struct {
		name    string
		spec    string
		method  string
		rand    float64
		wantErr codes.Code
	}{
		{"rate 1 always applies", "code=UNAVAILABLE,method=" + createOrder, createOrder, 0.999, codes.Unavailable},
		{"other methods untouched", "code=UNAVAILABLE,method=" + createOrder, getOrder, 0, codes.OK},
		{"* matches every method", "code=INTERNAL", getOrder, 0, codes.Internal},
		{"rate 0.5, draw 0.4: applies", "code=UNAVAILABLE,rate=0.5", getOrder, 0.4, codes.Unavailable},
		{"rate 0.5, draw 0.6: skipped", "code=UNAVAILABLE,rate=0.5", getOrder, 0.6, codes.OK},
		{"rate 0 never applies", "code=UNAVAILABLE,rate=0", getOrder, 0, codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := faults.Parse(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			var ran int
			ic := faults.UnaryServerInterceptor(rules, faults.WithRand(func() float64 { return tt.rand }))
			_, err = ic(context.Background(), nil, info(tt.method), handler(&ran))
			if got := status.Code(err); got != tt.wantErr {
				t.Fatalf("code = %v, want %v", got, tt.wantErr)
			}
			if tt.wantErr != codes.OK {
				if rpcerr.Reason(err) != reason.FaultInjected || ran != 0 {
					t.Errorf("err %v (handler ran %d), want reason %s and no handler", err, ran, reason.FaultInjected)
				}
			} else if ran != 1 {
				t.Errorf("handler ran %d times, want 1", ran)
			}
		})
	}
}

func TestDelayWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rules, _ := faults.Parse("delay=350ms,method=" + createOrder)
		ic := faults.UnaryServerInterceptor(rules)
		var ran int
		done := make(chan error, 1)
		go func() {
			_, err := ic(context.Background(), nil, info(createOrder), handler(&ran))
			done <- err
		}()
		time.Sleep(349 * time.Millisecond)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("call finished before the 350ms delay")
		default:
		}
		time.Sleep(time.Millisecond)
		if err := <-done; err != nil || ran != 1 {
			t.Errorf("after 350ms: err %v, handler ran %d; want nil, 1", err, ran)
		}
	})
}

func TestDelayEndsWhenTheCallerGivesUp(t *testing.T) {
	rules, _ := faults.Parse("delay=1h")
	ic := faults.UnaryServerInterceptor(rules)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran int
	if _, err := ic(ctx, nil, info(createOrder), handler(&ran)); status.Code(err) != codes.Canceled || ran != 0 {
		t.Errorf("cancelled caller: err %v, handler ran %d; want CANCELLED, 0", err, ran)
	}
}

// TestInjectedQuota: an injected RESOURCE_EXHAUSTED is a quota (it carries
// a QuotaFailure), so the edge answers it 429 and not as a size limit.
func TestInjectedQuota(t *testing.T) {
	for _, spec := range []string{"code=RESOURCE_EXHAUSTED", "code=UNAVAILABLE"} {
		rules, err := faults.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		var ran int
		_, err = faults.UnaryServerInterceptor(rules)(context.Background(), nil, info(createOrder), handler(&ran))
		quota := false
		for _, d := range status.Convert(err).Details() {
			_, ok := d.(*errdetails.QuotaFailure)
			quota = quota || ok
		}
		if want := status.Code(err) == codes.ResourceExhausted; quota != want || rpcerr.Reason(err) != reason.FaultInjected {
			t.Errorf("%s: err %v, QuotaFailure %v; want QuotaFailure %v and reason %s", spec, err, quota, want, reason.FaultInjected)
		}
	}
}
