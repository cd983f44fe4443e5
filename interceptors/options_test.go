package interceptors_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
)

// TestWithTimeoutMeansConfigTimeout: WithTimeout(d) and a Config with
// Timeout d give the upstream the same deadline, NoTimeout included. The
// server reads the deadline it got; the bubble's clock makes it exact.
func TestWithTimeoutMeansConfigTimeout(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want time.Duration // deadline the server sees; 0 means none
	}{
		{"NoTimeout: none of its own", interceptors.NoTimeout, 0},
		{"zero: the default", 0, interceptors.DefaultTimeout},
		{"positive", 240 * time.Millisecond, 240 * time.Millisecond},
	}
	for _, tt := range tests {
		ways := map[string]interceptors.Option{
			"WithTimeout": interceptors.WithTimeout(tt.d),
			"WithConfig":  interceptors.WithConfig(interceptors.Config{Timeout: tt.d}),
		}
		for way, opt := range ways {
			t.Run(tt.name+"/"+way, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var got time.Duration
					target, dial := stub.Serve(t, &stub.Inventory{GetItemFunc: func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
						if dl, ok := ctx.Deadline(); ok {
							got = time.Until(dl)
						}
						return &inventoryv1.Item{}, nil
					}}, nil)
					conn, err := interceptors.Dial(target, opt, interceptors.WithUpstream("inventory"),
						interceptors.WithDialOptions(dial), quiet)
					if err != nil {
						t.Fatalf("Dial = %v", err)
					}
					defer conn.Close()
					if _, err := inventoryv1.NewInventoryServiceClient(conn).GetItem(context.Background(), &inventoryv1.GetItemRequest{Sku: "kb-1"}); err != nil {
						t.Fatal(err)
					}
					if got != tt.want {
						t.Errorf("server's deadline in %v, want %v", got, tt.want)
					}
				})
			})
		}
	}
}

// TestWithConfigComesFirst: WithConfig replaces every Config field, so an
// option that set one before it would be lost; that is an error instead.
// Options that are not Config fields may come anywhere.
func TestWithConfigComesFirst(t *testing.T) {
	cfg := interceptors.Config{Target: "127.0.0.1:1"}
	tests := []struct {
		name     string
		opts     []interceptors.Option
		wantName string // "" means a *FieldError for "config"
	}{
		{"WithConfig then WithUpstream", []interceptors.Option{interceptors.WithConfig(cfg), interceptors.WithUpstream("inventory")}, "inventory"},
		{"WithUpstream then WithConfig", []interceptors.Option{interceptors.WithUpstream("inventory"), interceptors.WithConfig(cfg)}, ""},
		{"WithMaxAttempts then WithConfig", []interceptors.Option{interceptors.WithMaxAttempts(1), interceptors.WithConfig(cfg)}, ""},
		{"WithLogger then WithConfig", []interceptors.Option{quiet, interceptors.WithConfig(cfg)}, "127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, err := interceptors.NewUpstream("", tt.opts...)
			if tt.wantName == "" {
				var fe *interceptors.FieldError
				if !errors.As(err, &fe) || fe.Field != "config" {
					t.Fatalf("NewUpstream = %v, want a *FieldError for config", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer up.Close()
			if up.Name() != tt.wantName {
				t.Errorf("Name() = %q, want %q", up.Name(), tt.wantName)
			}
		})
	}
}
