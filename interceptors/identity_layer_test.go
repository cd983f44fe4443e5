package interceptors_test

import (
	"strings"
	"testing"

	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/identity"
)

// TestIdentityLayer: WithIdentity adds the identity layer right after
// trace, so one assertion per call rides every attempt; without it there
// is none.
func TestIdentityLayer(t *testing.T) {
	keys, err := identity.NewKeys(identity.GenerateKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := identity.NewMinter(keys, identity.WithService("order"))
	names := func(opts ...interceptors.Option) string {
		layers, err := interceptors.Layers(append(opts, interceptors.WithUpstream("inventory"), interceptors.WithAddresses([]string{"127.0.0.1:1"}))...)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, l := range layers {
			n = append(n, l.Name)
		}
		return strings.Join(n, " ")
	}
	if got, want := names(interceptors.WithIdentity(m)), "trace identity deadline bulkhead breaker retry eject"; got != want {
		t.Errorf("Layers(WithIdentity) = %s, want %s", got, want)
	}
	if got, want := names(), "trace deadline bulkhead breaker retry eject"; got != want {
		t.Errorf("Layers() = %s, want %s", got, want)
	}
}
