package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// identityFlagUsage documents --identity-keys in every service's help.
const identityFlagUsage = "identity keys `FILE` (lines of \"ID BASE64-SECRET [NOT-AFTER]\", the first signs): " +
	"the service verifies every caller's assertion with them and refuses calls without one; " +
	"empty means $" + identity.EnvKeysFile + ", else the keys in $" + identity.EnvKeys +
	", else none: the metadata of local callers (loopback, Unix socket) is trusted as sent, as before identity keys, and remote callers are refused (insecure; a warning is logged). The file is re-read every 2s (rotation)"

// keyWatchInterval is how often a keys file is re-read.
const keyWatchInterval = 2 * time.Second

// serviceKeys is a service process's identity ring and where it came from.
type serviceKeys struct {
	keys *identity.Keys // nil: none configured
	file string         // "" unless read from a file
	log  *slog.Logger
}

func loadServiceKeys(file string, l *slog.Logger) (serviceKeys, error) {
	k, f, err := identity.LoadKeys(file)
	if err != nil {
		return serviceKeys{}, err
	}
	if k == nil {
		l.Warn("no identity keys (--identity-keys, $" + identity.EnvKeysFile + ", $" + identity.EnvKeys +
			"): trusting the caller metadata of local callers as sent, as before identity keys, and refusing remote ones (insecure: anyone who can run a process on this host can be anyone); portico dev passes keys")
	} else {
		l.Info("identity keys loaded", "keyIds", k.IDs(), "file", f)
	}
	return serviceKeys{keys: k, file: f, log: l}, nil
}

// verifier returns the verifier for service (its full gRPC name), or nil
// without keys (the server then trusts local callers' metadata:
// grpcserver.Config.TrustMetadata, set by the caller when this is nil).
func (s serviceKeys) verifier(service string) (*identity.Verifier, error) {
	if s.keys == nil {
		return nil, nil
	}
	return identity.NewVerifier(s.keys, service)
}

// pageSecret returns the secret a service signs its page tokens with,
// derived from the signing identity key so that replicas agree; nil
// without keys (a secret per process).
func (s serviceKeys) pageSecret() []byte {
	if s.keys == nil {
		return nil
	}
	return s.keys.Derive("portico page tokens v1")
}

// minter returns a Minter calling as the service name, or nil without keys
// (calls then carry no identity and the callee refuses them).
func (s serviceKeys) minter(name string) (*identity.Minter, error) {
	if s.keys == nil {
		return nil, nil
	}
	return identity.NewMinter(s.keys, identity.WithService(name))
}

// keySetter is a Minter or Verifier.
type keySetter interface{ SetKeys(*identity.Keys) }

// watch re-reads the keys file until ctx ends and hands each new ring to
// targets (nil ones skipped). It returns at once without a file.
func (s serviceKeys) watch(ctx context.Context, targets ...keySetter) {
	if s.file == "" {
		return
	}
	identity.Watch(ctx, s.file, keyWatchInterval, func(k *identity.Keys) {
		for _, t := range targets {
			if t != nil {
				t.SetKeys(k)
			}
		}
		s.log.Info("identity keys reloaded", "keyIds", k.IDs())
	}, func(err error) {
		s.log.Warn("identity keys not reloaded; keeping the running ones", "err", err.Error())
	})
}

// runIdentity prints an identity assertion signed with a keys file, for
// calling a service directly (grpcurl -H "x-portico-identity: ...").
// Whoever can read the keys can do this anyway; the command only saves
// writing the format by hand.
func runIdentity(_ context.Context, e env, args []string) error {
	fs, _ := newFlags("identity")
	keysFile := fs.String("keys", "", "identity keys `FILE` to sign with (empty: $"+identity.EnvKeysFile+", else $"+identity.EnvKeys+")")
	service := fs.String("service", "", "the called gRPC `SERVICE`, e.g. portico.order.v1.OrderService (the audience); required")
	subject := fs.String("subject", "", "the caller's `SUBJECT`, e.g. alice; required")
	role := fs.String("role", "customer", "the caller's `ROLE`: admin, reader, customer or service")
	forSubject := fs.String("for", "", "the customer `SUBJECT` a service acts for (optional)")
	ttl := fs.Duration("ttl", identity.DefaultTTL, "the assertion's life (at most 5m)")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if *service == "" || *subject == "" {
		return &usageError{errors.New("--service and --subject are required")}
	}
	keys, _, err := identity.LoadKeys(*keysFile)
	if err != nil {
		return err
	}
	if keys == nil {
		return &usageError{errors.New("no keys: give --keys FILE")}
	}
	m, err := identity.NewMinter(keys, identity.WithTTL(*ttl))
	if err != nil {
		return err
	}
	tok, err := m.Mint(*service, callmeta.Principal{Subject: *subject, Role: *role}, *forSubject)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, tok)
	return nil
}
