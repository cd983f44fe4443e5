package auth

import (
	"errors"
	"slices"

	"github.com/portico-gateway/portico/internal/callmeta"
)

// Credential kinds a Principal can come from (Principal.Via).
const (
	ViaAPIKey    = "api_key"
	ViaJWT       = "jwt"
	ViaSignedApp = "signed_app"
)

// Principal is an authenticated caller. Rate limits key quotas on Subject
// and Plan; the policy looks at Roles; services receive Subject and Role.
type Principal struct {
	// Subject identifies the caller, e.g. "alice": printable ASCII.
	Subject string
	// Role is the primary role, Roles[0] (or "" with no roles): the one
	// role services receive as x-portico-role.
	Role string
	// Roles are every role the caller holds, Role first.
	Roles []string
	// Tenant is the caller's organisation, "" when none is known.
	Tenant string
	// Plan is the caller's commercial plan ("free", "pro"), "" when none
	// is known; rate limits choose a quota by it.
	Plan string
	// Via is the kind of credential that authenticated the caller: one of
	// ViaAPIKey, ViaJWT, ViaSignedApp.
	Via string
}

// NewPrincipal returns a principal with roles, the first one primary.
func NewPrincipal(subject string, roles []string, tenant, plan, via string) Principal {
	p := Principal{Subject: subject, Roles: slices.Clone(roles), Tenant: tenant, Plan: plan, Via: via}
	if len(roles) > 0 {
		p.Role = roles[0]
	}
	return p
}

// HasRole reports whether p holds role: Role, or one of Roles (so a
// Principal{Subject, Role} literal works too).
func (p Principal) HasRole(role string) bool {
	return role != "" && (p.Role == role || slices.Contains(p.Roles, role))
}

// Equal reports whether p and q are the same principal.
func (p Principal) Equal(q Principal) bool {
	return p.Subject == q.Subject && p.Role == q.Role && slices.Equal(p.Roles, q.Roles) &&
		p.Tenant == q.Tenant && p.Plan == q.Plan && p.Via == q.Via
}

// Built-in roles: the policy a config without auth.policy gets
// (DefaultRules) knows these three.
const (
	RoleAdmin    = callmeta.RoleAdmin
	RoleReader   = callmeta.RoleReader
	RoleCustomer = callmeta.RoleCustomer
)

// RoleService is the role of a Portico service calling another as itself
// (callmeta.RoleService). It is reserved: no policy may grant it, so no
// credential at the edge (an API key, an app, a JWT's roles claim) ever
// passes it on to a service.
const RoleService = callmeta.RoleService

// errReservedRole is why a policy may not grant RoleService.
var errReservedRole = errors.New(`role "service" is reserved for Portico's services calling one another; the edge never grants it`)

// MaxRoles bounds the roles of one principal (a JWT's roles claim).
const MaxRoles = 16

// ValidRole reports whether role is a usable role name: 1-32 characters
// of [a-z0-9_-], starting with a letter.
func ValidRole(role string) bool {
	if role == "" || len(role) > 32 || role[0] < 'a' || role[0] > 'z' {
		return false
	}
	for i := 0; i < len(role); i++ {
		c := role[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ValidSubject reports whether s can be a Subject, Tenant or Plan: 1-255
// printable ASCII characters with no space at either end
// (callmeta.ValidName), so it travels as gRPC metadata unchanged and is
// never mistaken for the name it would be once trimmed.
func ValidSubject(s string) bool { return callmeta.ValidName(s, callmeta.MaxNameLen) }
