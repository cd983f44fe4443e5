package apidoc

import (
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/route"
)

// Security scheme names of the document.
const (
	schemeBearer    = "bearer"
	schemeSignedApp = "signedApp"
)

// rolesExtension lists, per operation, the roles the built-in policy
// grants it (a deployment's auth.policy may differ).
const rolesExtension = "x-portico-roles"

// security states who may call one operation: either scheme, and the
// roles of the built-in policy (auth.DefaultRules), in the description
// and as x-portico-roles.
func security(op *openapi3.Operation, method, path, rpc string) {
	rt := &route.Route{Method: method, Pattern: path, RPC: rpc}
	roles := auth.DefaultPolicy([]*route.Route{rt}).Roles(rt)
	op.Security = &openapi3.SecurityRequirements{{schemeBearer: []string{}}, {schemeSignedApp: []string{}}}
	if op.Extensions == nil {
		op.Extensions = map[string]any{}
	}
	op.Extensions[rolesExtension] = roles
	who := "no role"
	if len(roles) > 0 {
		who = strings.Join(roles, ", ")
	}
	note := "Roles (built-in policy; a deployment's `auth.policy` may grant others): " + who + "."
	if op.Description != "" { // a paragraph of its own after the RPC's text
		note = "\n\n" + note
	}
	op.Description += note
}

// securitySchemes are the document's schemes: a bearer credential (an API
// key or a JWT) and a signed request.
func securitySchemes() openapi3.SecuritySchemes {
	return openapi3.SecuritySchemes{
		schemeBearer: {Value: &openapi3.SecurityScheme{
			Type: "http", Scheme: "bearer",
			Description: "A bearer credential, `Authorization: Bearer <token>` (RFC 6750): an API key, or a JWT from the configured issuer (RS*, PS*, ES* or EdDSA; iss, aud and exp required).",
		}},
		schemeSignedApp: {Value: &openapi3.SecurityScheme{
			Type: "apiKey", In: "header", Name: auth.HeaderSignature,
			Description: "A signed request: `X-App-Id`, `X-Timestamp` (Unix seconds, within 300 s), `X-Nonce` (16-128 of [A-Za-z0-9._~-], once) and `X-Signature`, the lowercase hex HMAC-SHA256 under the app's secret of METHOD, path, sorted query, timestamp, nonce, the body's SHA-256 and the Idempotency-Key (empty without one), one per line.",
		}},
	}
}
