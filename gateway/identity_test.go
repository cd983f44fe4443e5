package gateway

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// TestEdgeSignsIdentity: with an identity section the edge sends the
// principal only as an assertion for the called service, which the
// service's verifier accepts; without one, such a service refuses the call
// (401 at the edge).
func TestEdgeSignsIdentity(t *testing.T) {
	keys, err := identity.NewKeys(identity.GenerateKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_PORTICO_KEYS", keys.String())
	v, _ := identity.NewVerifier(keys, "portico.inventory.v1.InventoryService")
	verify := map[string]grpc.UnaryServerInterceptor{"inventory": identity.UnaryServerInterceptor(v)}
	tests := []struct {
		name       string
		keysEnv    string
		wantStatus int
	}{
		{"signed", "TEST_PORTICO_KEYS", 200},
		{"no identity section", "", 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{cfg: func(c *config.Config) { c.Identity.KeysEnv = tt.keysEnv }, serve: verify})
			var md metadata.MD
			var p callmeta.Principal
			h.inv.getItem = func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
				md, _ = metadata.FromIncomingContext(ctx)
				p, _ = callmeta.PrincipalFromIncoming(ctx)
				return &inventoryv1.Item{Sku: "keyboard-001"}, nil
			}
			r := h.do("GET", "/api/inventory/keyboard-001", "demo-read-token", "")
			if r.status != tt.wantStatus {
				t.Fatalf("GET = %d %s, want %d", r.status, r.body, tt.wantStatus)
			}
			if tt.wantStatus != 200 {
				return
			}
			if p != (callmeta.Principal{Subject: "course-reader", Role: callmeta.RoleReader}) || len(md.Get(callmeta.IdentityKey)) != 1 {
				t.Errorf("upstream saw %+v with metadata %v, want the verified reader and one assertion", p, md)
			}
		})
	}
}

func TestIdentityAndTLSConfigValidate(t *testing.T) {
	t.Setenv("TEST_PORTICO_BAD_KEYS", "k1 short")
	tests := []struct {
		name  string
		edit  func(*config.Config)
		field string
	}{
		{"file and env", func(c *config.Config) { c.Identity = config.IdentityConfig{KeysFile: "a", KeysEnv: "B"} }, "identity"},
		{"missing keys file", func(c *config.Config) { c.Identity.KeysFile = "/nonexistent/identity.keys" }, "identity.keys_file"},
		{"bad keys in env", func(c *config.Config) { c.Identity.KeysEnv = "TEST_PORTICO_BAD_KEYS" }, "identity.keys_env"},
		{"ttl above max", func(c *config.Config) { c.Identity.TTL = identity.DefaultMaxTTL + 1 }, "identity.ttl"},
		{"edge cert without key", func(c *config.Config) { c.TLS.CertFile = "cert.pem" }, "tls"},
		{"edge client CA without a pair", func(c *config.Config) { c.TLS.ClientCAFile = "ca.pem" }, "tls: tls: both a cert file and a key file"},
		{"upstream cert without key", func(c *config.Config) { c.Upstreams[0].TLS.CertFile = "cert.pem" }, "upstreams[0].tls"},
		{"upstream missing CA", func(c *config.Config) { c.Upstreams[1].TLS.CAFile = "/nonexistent/ca.pem" }, "upstreams[1].tls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Dev(43100)
			tt.edit(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Validate() = %v, want an error naming %s", err, tt.field)
			}
		})
	}
	if err := config.Dev(43100).Validate(); err != nil {
		t.Errorf("config.Dev().Validate() = %v", err)
	}
}
