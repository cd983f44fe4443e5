package gateway

import (
	"context"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/boundedfile"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// signer is one snapshot's identity Minter and the keys text it signs
// with. A snapshot whose identity section is unchanged keeps its
// predecessor's signer; a changed section (another file, TTL or
// variable) is a new one, read afresh. text is what the keys watch
// compares the file with; it is read and written under reloadMu.
type signer struct {
	m    *identity.Minter
	text string
	ring *identity.Keys // m's ring, for the stream tickets' keys; under reloadMu after build
}

// keys returns the signer's ring; nil for a nil signer.
func (sg *signer) keys() *identity.Keys {
	if sg == nil {
		return nil
	}
	return sg.ring
}

// newSigner reads the keys c names and builds their Minter; nil when c
// names none.
func newSigner(c config.IdentityConfig) (*signer, error) {
	if !c.On() {
		return nil, nil
	}
	text, err := c.KeysText()
	if err != nil {
		return nil, err
	}
	k, err := c.ParseKeys(text)
	if err != nil {
		return nil, err
	}
	m, err := identity.NewMinter(k, identity.WithTTL(c.TTL))
	if err != nil {
		return nil, err
	}
	return &signer{m: m, text: text, ring: k}, nil
}

// signerFor returns prev's signer when cfg's identity section is the
// same as prev's (its ring may have rotated since), else a new one.
func (s *Server) signerFor(cfg config.Config, prev *snapshot) (*signer, error) {
	if prev != nil && prev.cfg.Identity == cfg.Identity {
		return prev.identity, nil
	}
	if !cfg.Identity.On() {
		s.log.Warn("no identity section: upstream calls carry the principal as plain metadata, which Portico's services refuse")
	}
	return newSigner(cfg.Identity)
}

// setPrincipal tells the upstream who calls: with identity keys, a signed
// assertion for the called service alone (package interceptors/identity)
// by the signer of the request's snapshot; without (an old config), the
// plain subject and role. Nothing is set for a request without a
// principal.
func (s *Server) setPrincipal(md metadata.MD, ex *exchange) {
	if ex.principal.Subject == "" {
		return
	}
	sg := ex.snap.identity
	if sg == nil {
		md.Set(callmeta.SubjectKey, ex.principal.Subject)
		md.Set(callmeta.RoleKey, ex.principal.Role)
		return
	}
	if ex.ep == nil {
		return
	}
	tok, err := sg.m.Mint(identity.Audience(ex.ep.RPC),
		callmeta.Principal{Subject: ex.principal.Subject, Role: ex.principal.Role}, "")
	if err != nil {
		// Config validation keeps subjects and roles mintable; should one
		// slip through, the call goes without identity and the service
		// refuses it.
		ex.logErr = "identity: " + err.Error()
		return
	}
	md.Set(callmeta.IdentityKey, tok)
}

// SetIdentityKeys replaces the ring the live config's signer uses
// (rotation between reloads). A no-op when the live config has no
// identity section.
func (s *Server) SetIdentityKeys(k *identity.Keys) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	sn := s.snap.Load()
	if sg := sn.identity; sg != nil {
		sg.m.SetKeys(k)
		sg.ring = k
		sn.tickets.Store(s.ticketsFor(sn, k))
	}
}

// WatchIdentityKeys re-reads the live config's identity.keys_file every
// interval until ctx ends, and hands a changed, valid ring to the live
// signer: a rotation applies without a reload. It follows the
// file a reload names. A file that fails to read or parse is logged once
// and the running ring stays.
func (s *Server) WatchIdentityKeys(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var failed string // the last failure logged, so it is logged once
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.refreshIdentityKeys(); err != nil && err.Error() != failed {
			failed = err.Error()
			s.log.Warn("identity keys not reloaded; keeping the running ones", "err", failed)
		} else if err == nil {
			failed = ""
		}
	}
}

// refreshIdentityKeys is one pass of WatchIdentityKeys. It runs under
// reloadMu, so a reload in between never loses a rotation: either the
// reload reads the newer file, or this pass applies it to the new signer.
func (s *Server) refreshIdentityKeys() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	sn := s.snap.Load()
	file := sn.cfg.Identity.KeysFile
	if sn.identity == nil || file == "" || s.closed {
		return nil
	}
	b, err := boundedfile.Read(file, identity.MaxKeysFileBytes)
	if err != nil || string(b) == sn.identity.text {
		return err
	}
	k, err := sn.cfg.Identity.ParseKeys(string(b))
	if err != nil {
		return err
	}
	sn.identity.m.SetKeys(k)
	sn.identity.text = string(b)
	sn.identity.ring = k
	sn.tickets.Store(s.ticketsFor(sn, k))
	s.log.Info("identity keys reloaded", "keyIds", k.IDs())
	return nil
}
