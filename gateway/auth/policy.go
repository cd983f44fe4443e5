package auth

import (
	"net/http"
	"strings"

	"github.com/portico-gateway/portico/internal/callmeta"
)

// grant is one line of the coarse policy.
type grant struct {
	methods []string // nil means any method
	prefix  string
}

var (
	readOnly  = []string{http.MethodGet, http.MethodHead}
	readWrite = []string{http.MethodGet, http.MethodHead, http.MethodPost}
)

// policy is the whole coarse authorization table; see the package doc.
var policy = map[string][]grant{
	callmeta.RoleAdmin:    {{nil, "/api"}},
	callmeta.RoleReader:   {{readOnly, "/api"}},
	callmeta.RoleCustomer: {{readOnly, "/api/inventory"}, {readWrite, "/api/orders"}},
}

// Allowed reports whether p may call method on path.
func Allowed(p Principal, method, path string) bool {
	for _, g := range policy[p.Role] {
		if under(path, g.prefix) && (g.methods == nil || contains(g.methods, method)) {
			return true
		}
	}
	return false
}

func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func contains(ms []string, m string) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}
