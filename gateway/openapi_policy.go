package gateway

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/route"
)

// rolesExtension is the operation member of the OpenAPI document that
// lists the roles that may call it (package apidoc writes the built-in
// policy's).
const rolesExtension = "x-portico-roles"

// builtinRolesNote starts the sentence package apidoc ends each
// operation's description with (its own paragraph, or the whole
// description when the RPC has no comment); policyNote replaces it.
const (
	builtinRolesNote = "Roles (built-in policy;"
	policyRolesNote  = "Roles (this deployment's `auth.policy`): "
)

// documentPolicy returns doc with each operation's x-portico-roles and the
// roles sentence of its description stating pol, the deployment's own
// policy, instead of the built-in one the generated document states; nil
// when doc is not an OpenAPI document it can read (it is then served as
// is). An operation is matched to its route by method and path template
// (its shape: variable names aside).
func documentPolicy(doc []byte, pol *auth.Policy, routes []*route.Route) []byte {
	var d map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // keep int64 bounds exact
	if err := dec.Decode(&d); err != nil {
		return nil
	}
	paths, _ := d["paths"].(map[string]any)
	if paths == nil {
		return nil
	}
	// by shape: the document names a variable by its JSON name
	// ({orderId}), a loaded route's template by its proto name ({order_id})
	byOp := map[[2]string]*route.Route{}
	for _, rt := range routes {
		byOp[[2]string{strings.ToLower(rt.Method), pathVars.ReplaceAllString(rt.Template, "{}")}] = rt
	}
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, o := range ops {
			op, ok := o.(map[string]any)
			rt := byOp[[2]string{method, pathVars.ReplaceAllString(path, "{}")}]
			if !ok || rt == nil {
				continue
			}
			roles := pol.Roles(rt)
			if roles == nil {
				roles = []string{}
			}
			op[rolesExtension] = roles
			if desc, ok := op["description"].(string); ok {
				if i := strings.LastIndex(desc, builtinRolesNote); i >= 0 {
					who := "no role"
					if len(roles) > 0 {
						who = strings.Join(roles, ", ")
					}
					op["description"] = desc[:i] + policyRolesNote + who + "."
				}
			}
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil
	}
	return out.Bytes()
}
