package cli

import (
	"slices"
	"testing"

	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/logging"
)

// TestDevEnv: dev's children log unbuffered unless the environment says
// otherwise, and always get the run's identity keys.
func TestDevEnv(t *testing.T) {
	keys := identity.EnvKeysFile + "=/tmp/keys"
	tests := []struct {
		name    string
		environ []string
		want    []string
	}{
		{"unset: unbuffered", []string{"HOME=/root"}, []string{"HOME=/root", keys, logging.BufferEnv + "=0"}},
		{"set: kept", []string{logging.BufferEnv + "=65536"}, []string{logging.BufferEnv + "=65536", keys}},
		{"set to 0: kept once", []string{logging.BufferEnv + "=0"}, []string{logging.BufferEnv + "=0", keys}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			environ := slices.Clone(tt.environ)
			if got := devEnv(environ, "/tmp/keys"); !slices.Equal(got, tt.want) {
				t.Errorf("devEnv(%q) = %q, want %q", tt.environ, got, tt.want)
			}
			if !slices.Equal(environ, tt.environ) {
				t.Errorf("devEnv changed its argument: %q", environ)
			}
		})
	}
}
