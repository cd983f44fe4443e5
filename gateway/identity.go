package gateway

import (
	"google.golang.org/grpc/metadata"

	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// setPrincipal tells the upstream who calls: with identity keys, a signed
// assertion for the called service alone (package interceptors/identity);
// without (an old config), the plain subject and role. Nothing is set for a
// request without a principal.
func (s *Server) setPrincipal(md metadata.MD, ex *exchange) {
	if ex.principal.Subject == "" {
		return
	}
	if s.identity == nil {
		md.Set(callmeta.SubjectKey, ex.principal.Subject)
		md.Set(callmeta.RoleKey, ex.principal.Role)
		return
	}
	if ex.ep == nil {
		return
	}
	tok, err := s.identity.Mint(identity.Audience(ex.ep.RPC),
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

// SetIdentityKeys replaces the ring the edge signs with (rotation without
// a restart; the cmd layer watches identity.keys_file). A no-op when the
// config has no identity section.
func (s *Server) SetIdentityKeys(k *identity.Keys) { s.identity.SetKeys(k) }
