package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/portico-gateway/portico/gateway/protoload"
)

// loadedServices are the run-time services of a config's upstreams
// (upstreams[].services): their descriptors, read from a descriptor set
// or by server reflection, immutable once loaded.
type loadedServices struct {
	// byUpstream maps an upstream's name to its services, in the order
	// its config names them.
	byUpstream map[string][]protoreflect.ServiceDescriptor
	// sum is a digest of every descriptor loaded: part of the config's
	// version, so changed descriptors make a changed config.
	sum string
	// deferred names the upstreams left unloaded because they use server
	// reflection and the load was deferReflection's (describe never dials).
	deferred []string
}

// deferReflectionKey marks a context whose loads skip reflection upstreams.
type deferReflectionKey struct{}

// deferReflection returns ctx marked so that loadServices leaves the
// upstreams using server reflection unloaded (their services are
// resolved when the edge starts or reloads) instead of dialing them:
// `portico describe` reads a config without reaching any upstream.
func deferReflection(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferReflectionKey{}, true)
}

// ReflectionLimits bound one upstream's server reflection at each load;
// a variable so tests can shorten it.
var reflectionLimits = protoload.Limits{}

// fullName matches a proto service's full name.
var fullName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$`)

// validateServices checks upstreams[i].services and its source.
func (u UpstreamConfig) validateServices(v *validator, p string) {
	switch {
	case len(u.Services) == 0 && (u.Descriptors != "" || u.Reflection):
		v.add(p+".services", "name the services to load from %s", u.source())
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

func (u UpstreamConfig) source() string {
	if u.Reflection {
		return "server reflection"
	}
	return u.Descriptors
}

// dynamic reports whether the upstream's services are loaded at run time.
func (u UpstreamConfig) dynamic() bool { return len(u.Services) > 0 }

// loadServices reads the descriptors of every upstream with services:
// its descriptor set file, or the upstream's server reflection (a
// connection of its own, closed after). An error names the upstream and
// the file or service.
func loadServices(ctx context.Context, cfg Config) (*loadedServices, error) {
	ls := &loadedServices{byUpstream: map[string][]protoreflect.ServiceDescriptor{}}
	h := sha256.New()
	for i, up := range cfg.Upstreams {
		if !up.dynamic() {
			continue
		}
		if up.Reflection && ctx.Value(deferReflectionKey{}) != nil {
			ls.deferred = append(ls.deferred, up.Name)
			continue
		}
		files, err := loadFiles(ctx, up)
		if err != nil {
			return nil, fmt.Errorf("upstreams[%d] (%s): %w", i, up.Name, err)
		}
		sds, err := protoload.Services(files, up.Services)
		if err != nil {
			return nil, fmt.Errorf("upstreams[%d] (%s): %s: %w", i, up.Name, up.source(), err)
		}
		ls.byUpstream[up.Name] = sds
		fmt.Fprintf(h, "%s\n", up.Name)
		var fds []protoreflect.FileDescriptor // RangeFiles's order is a map's
		files.RangeFiles(func(fd protoreflect.FileDescriptor) bool { fds = append(fds, fd); return true })
		slices.SortFunc(fds, func(a, b protoreflect.FileDescriptor) int { return strings.Compare(a.Path(), b.Path()) })
		for _, fd := range fds {
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(protodesc.ToFileDescriptorProto(fd))
			h.Write(b)
		}
	}
	ls.sum = hex.EncodeToString(h.Sum(nil)[:6])
	return ls, nil
}

func loadFiles(ctx context.Context, up UpstreamConfig) (*protoregistry.Files, error) {
	if !up.Reflection {
		return protoload.ReadFile(up.Descriptors)
	}
	cc, err := Dial(ctx, up)
	if err != nil {
		return nil, fmt.Errorf("server reflection: %w", err)
	}
	defer cc.Close()
	return protoload.Reflect(ctx, cc, up.Services, reflectionLimits)
}

// hasDynamic reports whether any upstream loads services at run time.
func (c Config) hasDynamic() bool {
	return slices.ContainsFunc(c.Upstreams, UpstreamConfig.dynamic)
}

// withServices returns c with its run-time services loaded, unless they
// are already (a config from LoadConfig, or a kept version).
func (c Config) withServices(ctx context.Context) (Config, error) {
	if c.loaded != nil || !c.hasDynamic() {
		return c, nil
	}
	ls, err := loadServices(ctx, c)
	if err != nil {
		return c, fmt.Errorf("gateway config: %w", err)
	}
	c.loaded = ls
	return c, nil
}

// services returns upstream's loaded services.
func (c Config) services(upstream string) ([]protoreflect.ServiceDescriptor, error) {
	if c.loaded == nil {
		return nil, fmt.Errorf("gateway: the services of upstream %s are not loaded", upstream)
	}
	return c.loaded.byUpstream[upstream], nil
}
