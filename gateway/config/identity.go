package config

import (
	"fmt"
	"os"
	"time"

	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/boundedfile"
)

// IdentityConfig is where the edge gets the keys it signs each upstream
// call's identity assertion with (package interceptors/identity): the
// principal a credential proved, for the called service only, for a
// minute. Portico's services refuse calls without one. Empty means the old
// behaviour: the principal travels as plain x-portico-subject and
// x-portico-role metadata, which Portico's services no longer accept (use
// it only for upstreams of your own that trust the network).
type IdentityConfig struct {
	// KeysFile is a file of keys, one "ID BASE64-SECRET [NOT-AFTER]" per
	// line, the first signing (identity.ParseKeys); the services read the
	// same file (--identity-keys). The edge re-reads it every 2s and on
	// every reload, so a rotation applies to the next call. Keep it
	// private (0600).
	KeysFile string `yaml:"keys_file,omitempty"`
	// KeysEnv names an environment variable holding the keys text instead
	// (entries separated by ';' or newlines). Exactly one of KeysFile and
	// KeysEnv, or neither.
	KeysEnv string `yaml:"keys_env,omitempty"`
	// TTL is each assertion's life. Zero means identity.DefaultTTL (1m);
	// at most identity.DefaultMaxTTL (5m), the longest a service accepts.
	TTL time.Duration `yaml:"ttl,omitempty"`
}

// On reports whether the edge signs identities.
func (c IdentityConfig) On() bool { return c.KeysFile != "" || c.KeysEnv != "" }

// Keys loads the ring the section names; nil when it names none.
func (c IdentityConfig) Keys() (*identity.Keys, error) {
	if !c.On() {
		return nil, nil
	}
	text, err := c.KeysText()
	if err != nil {
		return nil, err
	}
	return c.ParseKeys(text)
}

// ParseKeys parses keys text the section named, an error naming its file.
func (c IdentityConfig) ParseKeys(text string) (*identity.Keys, error) {
	k, err := identity.ParseKeys(text)
	if err != nil && c.KeysFile != "" {
		return nil, fmt.Errorf("%s: %w", c.KeysFile, err)
	}
	return k, err
}

// KeysText reads the keys text the section names; "" when it names none.
func (c IdentityConfig) KeysText() (string, error) {
	switch {
	case c.KeysFile != "":
		b, err := boundedfile.Read(c.KeysFile, identity.MaxKeysFileBytes)
		return string(b), err
	case c.KeysEnv != "":
		return os.Getenv(c.KeysEnv), nil
	}
	return "", nil
}

// validate reports every problem of the identity section; with both key
// sources set it cannot know which keys are meant, so it reads neither.
func (c IdentityConfig) validate(v *validator) {
	both := c.KeysFile != "" && c.KeysEnv != ""
	if both {
		v.add("identity", "set keys_file or keys_env, not both")
	}
	if c.TTL < 0 || c.TTL > identity.DefaultMaxTTL {
		v.add("identity.ttl", "want 0 (default %v) to %v, got %v", identity.DefaultTTL, identity.DefaultMaxTTL, c.TTL)
	}
	if both {
		return
	}
	if _, err := c.Keys(); err != nil {
		field := "identity.keys_file"
		if c.KeysEnv != "" {
			field = "identity.keys_env"
		}
		v.add(field, "%v", err)
	}
}
