package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
)

// TestCheckConfigVerdictIsNew's: for each bad config (and a good one),
// `portico check-config FILE` refuses exactly when gateway.New refuses
// the same file, with New's message: the dry run is the start.
func TestCheckConfigVerdictIsNews(t *testing.T) {
	limitGroup := func(routes ...string) func(*config.Config) {
		return func(c *config.Config) {
			c.Limits.Groups = append(c.Limits.Groups, config.LimitGroupConfig{Name: "writes", Routes: routes,
				Limit: config.LimitConfig{Rate: 10, Burst: 10}})
		}
	}
	shedGroup := func(routes ...string) func(*config.Config) {
		return func(c *config.Config) {
			c.Shed.Groups = append(c.Shed.Groups, config.ShedGroupConfig{Name: "writes", Routes: routes, MaxInFlight: 4})
		}
	}
	tests := []struct {
		name string
		edit func(*config.Config)
		want string // "" when both accept it; else part of the refusal
	}{
		{"dev", func(*config.Config) {}, ""},
		{"limit group of a method the path lacks", limitGroup("POST /api/order"), "selects no route"},
		{"limit group of an unknown method", limitGroup("FOO /api/orders"), "limits.groups[1].routes[0]"},
		{"limit group selecting a route", limitGroup("GET /api/inventory/{sku}"), ""},
		{"shed group of a method the path lacks", shedGroup("POST /api/order"), "selects no route"},
		{"shed group of an unknown method", shedGroup("FOO /api/orders"), "shed.groups[0].routes[0]"},
		{"shed group selecting a route", shedGroup("POST /api/orders"), ""},
		{"two shed groups holding one route", func(c *config.Config) {
			shedGroup("POST /api/orders")(c)
			c.Shed.Groups = append(c.Shed.Groups, config.ShedGroupConfig{Name: "all", Routes: []string{"/api/orders"}, MaxInFlight: 4})
		}, `"writes" and "all" both hold POST /api/orders`},
		{"override selecting no route", func(c *config.Config) {
			c.Routes.Overrides = map[string]config.RouteOverride{"POST /api/order": {}}
		}, "selects no route"},
		{"policy selecting no route", func(c *config.Config) {
			c.Auth.Policy = []config.PolicyRuleConfig{{Roles: []string{"admin", "reader", "customer"}, Allow: []string{"*"}},
				{Roles: []string{"admin"}, Allow: []string{"FOO /api/orders"}}}
		}, "auth.policy"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Dev(43100)
			tt.edit(&c)
			b, err := yaml.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, strings.Repeat("c", i+1)+".yaml")
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			code := Main([]string{"check-config", p}, &out, &errb)

			raw, err := config.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			srv, newErr := gateway.New(context.Background(), raw, gateway.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
			if srv != nil {
				srv.Close()
			}
			if (code == 0) != (newErr == nil) {
				t.Fatalf("check-config exit %d (%s), gateway.New error %v", code, errb.String(), newErr)
			}
			if tt.want == "" {
				if newErr != nil {
					t.Fatalf("New: %v", newErr)
				}
				return
			}
			if newErr == nil || !strings.Contains(newErr.Error(), tt.want) {
				t.Fatalf("New error %v, want one containing %q", newErr, tt.want)
			}
			if !strings.Contains(errb.String(), newErr.Error()) {
				t.Errorf("check-config says\n%s\nnot New's\n%s", errb.String(), newErr)
			}
		})
	}
}
