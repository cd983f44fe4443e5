package config

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/portico-gateway/portico/interceptors"
)

// Chain returns the client chain's config for this upstream: Resilience,
// plus what the upstream itself decides. A host:port list is served by a
// resolver Portico owns (reloadable, with ejection); one gRPC target such
// as dns:///inventory:43101 is used as is. The chain has no timeout of its
// own: the edge's route deadline (Timeout, routes.overrides, a client's
// Grpc-Timeout) is the one deadline of a call. Health checking is on by
// default at the edge, watching HealthService unless
// resilience.health_check names a service; health_check.enabled: false
// turns it off.
func (u UpstreamConfig) Chain() interceptors.Config {
	c := u.Resilience
	c.Name = u.Name
	c.Target, c.Addresses = "", nil
	if interceptors.HostPorts(u.Addresses) {
		c.Addresses = slices.Clone(u.Addresses)
	} else if len(u.Addresses) > 0 {
		c.Target = u.Addresses[0]
	}
	if c.Timeout == 0 {
		c.Timeout = interceptors.NoTimeout // the route's deadline alone
	}
	if c.HealthCheck.Enabled == nil {
		c.HealthCheck.Enabled = new(true)
		c.HealthCheck.Service = cmp.Or(c.HealthCheck.Service, u.HealthService)
	}
	return c
}

// validateResilience checks upstream i's resilience block: the keys the
// upstream owns must be absent, and the chain built from it must be valid.
// Errors name the field under upstreams[i].resilience.
func (u UpstreamConfig) validateResilience(v *validator, p string) {
	r := u.Resilience
	p += ".resilience"
	if r.Name != "" || r.Target != "" || len(r.Addresses) > 0 {
		v.add(p, "name, target and addresses come from the upstream, not its resilience block")
	}
	err := u.Chain().Validate()
	var fe *interceptors.FieldError
	for _, e := range unjoin(err) {
		if errors.As(e, &fe) {
			v.add(p+"."+fe.Field, "%s", fe.Msg)
		} else {
			v.add(p, "%v", e)
		}
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// fullName matches a proto service's full name.
var fullName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$`)

// validateServices checks upstreams[i].services and its source.
func (u UpstreamConfig) validateServices(v *validator, p string) {
	switch {
	case len(u.Services) == 0 && (u.Descriptors != "" || u.Reflection):
		v.add(p+".services", "name the services to load from %s", u.Source())
	case len(u.Services) > 0 && u.Descriptors == "" && !u.Reflection:
		v.add(p+".services", "say where they are described: descriptors: FILE or reflection: true")
	case u.Descriptors != "" && u.Reflection:
		v.add(p+".reflection", "use descriptors or reflection, not both")
	}
	for j, s := range u.Services {
		if !fullName.MatchString(s) {
			v.add(fmt.Sprintf("%s.services[%d]", p, j), "want a service's full name such as acme.shipping.v1.ShippingService, got %q", s)
		} else if slices.Index(u.Services, s) < j {
			v.add(fmt.Sprintf("%s.services[%d]", p, j), "%q is named twice", s)
		}
	}
}

// Source names where the upstream's services are described: its
// descriptors file, or server reflection.
func (u UpstreamConfig) Source() string {
	if u.Reflection {
		return "server reflection"
	}
	return u.Descriptors
}

// Dynamic reports whether the upstream's services are loaded at run time.
func (u UpstreamConfig) Dynamic() bool { return len(u.Services) > 0 }
