package interceptors

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
)

// grpcChain is grpc-go's chaining (getChainUnaryInvoker), the reference
// compose must match.
func grpcChain(layers []grpc.UnaryClientInterceptor) grpc.UnaryClientInterceptor {
	var at func(i int, final grpc.UnaryInvoker) grpc.UnaryInvoker
	at = func(i int, final grpc.UnaryInvoker) grpc.UnaryInvoker {
		if i == len(layers) {
			return final
		}
		return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
			return layers[i](ctx, method, req, reply, cc, at(i+1, final), opts...)
		}
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return layers[0](ctx, method, req, reply, cc, at(1, invoker), opts...)
	}
}

type ctxKey struct{}

// tracing layers write what they see and do to a call's log.
type callLog struct{ lines []string }

func (l *callLog) add(s string) { l.lines = append(l.lines, s) }

func logOf(ctx context.Context) *callLog { return ctx.Value(ctxKey{}).(*callLog) }

// pass logs its name around next and adds a call option.
func pass(name string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, next grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		logOf(ctx).add(name + " in, opts " + strings.Repeat("o", len(opts)))
		err := next(ctx, method, req, reply, cc, append(opts, grpc.EmptyCallOption{})...)
		logOf(ctx).add(name + " out: " + errText(err))
		return err
	}
}

// twice calls next a second time after the first returned, as retry does.
func twice(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, next grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	logOf(ctx).add("twice: first " + errText(next(ctx, method, req, reply, cc, opts...)))
	return next(ctx, method, req, reply, cc, opts...)
}

// refuse answers without calling next.
func refuse(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ grpc.UnaryInvoker, _ ...grpc.CallOption) error {
	logOf(ctx).add("refuse")
	return errors.New("refused")
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// TestCompose: the composed layers run exactly as grpc-go's chain runs
// them: order, call options, a next called twice, a layer that answers
// itself, the final invoker's answer.
func TestCompose(t *testing.T) {
	tests := []struct {
		name   string
		layers []grpc.UnaryClientInterceptor
		fail   bool // the final invoker fails
	}{
		{"one layer", []grpc.UnaryClientInterceptor{pass("a")}, false},
		{"in order", []grpc.UnaryClientInterceptor{pass("a"), pass("b"), pass("c")}, false},
		{"the final invoker fails", []grpc.UnaryClientInterceptor{pass("a"), pass("b")}, true},
		{"next called twice", []grpc.UnaryClientInterceptor{pass("a"), twice, pass("b"), pass("c")}, false},
		{"nested twice", []grpc.UnaryClientInterceptor{twice, pass("a"), twice, pass("b")}, true},
		{"a layer answers", []grpc.UnaryClientInterceptor{pass("a"), refuse, pass("b")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := func(ic grpc.UnaryClientInterceptor) ([]string, error) {
				log := &callLog{}
				ctx := context.WithValue(context.Background(), ctxKey{}, log)
				final := func(ctx context.Context, method string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
					logOf(ctx).add("final " + method + ", opts " + strings.Repeat("o", len(opts)))
					if tt.fail {
						return errors.New("down")
					}
					return nil
				}
				err := ic(ctx, "/svc/M", nil, nil, nil, final, grpc.EmptyCallOption{})
				return log.lines, err
			}
			want, wantErr := run(grpcChain(tt.layers))
			got, err := run(compose(tt.layers))
			if !slices.Equal(got, want) || errText(err) != errText(wantErr) {
				t.Errorf("compose ran\n%q, %v\nwant (grpc-go's chain)\n%q, %v", got, err, want, wantErr)
			}
		})
	}
}

// TestComposeConcurrent: calls in parallel each have their own place in
// the layers (go test -race).
func TestComposeConcurrent(t *testing.T) {
	var mu sync.Mutex
	runs := 0
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, next grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		mu.Lock()
		runs++
		mu.Unlock()
		return next(ctx, method, req, reply, cc, opts...)
	}
	ic := compose([]grpc.UnaryClientInterceptor{count, count, count})
	final := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if err := ic(context.Background(), "/svc/M", nil, nil, nil, final); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if runs != 8*50*3 {
		t.Errorf("layers ran %d times, want %d", runs, 8*50*3)
	}
}

// BenchmarkCompose: the plumbing alone of eight layers that only call
// next, as compose runs them and as grpc-go's chain does.
func BenchmarkCompose(b *testing.B) {
	through := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, next grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return next(ctx, method, req, reply, cc, opts...)
	}
	layers := slices.Repeat([]grpc.UnaryClientInterceptor{through}, 8)
	final := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	for _, bc := range []struct {
		name string
		ic   grpc.UnaryClientInterceptor
	}{{"compose", compose(layers)}, {"grpc-go", grpcChain(layers)}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				_ = bc.ic(ctx, "/svc/M", nil, nil, nil, final)
			}
		})
	}
}
