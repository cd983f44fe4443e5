package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/portico-gateway/portico/gateway/config"
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

// Digest is part of the config's version (config.Loaded).
func (ls *loadedServices) Digest() string { return ls.sum }

// loadedOf returns the run-time services c carries, or nil.
func loadedOf(c config.Config) *loadedServices {
	ls, _ := c.Loaded().(*loadedServices)
	return ls
}

// ReflectionLimits bound one upstream's server reflection at each load;
// a variable so tests can shorten it.
var reflectionLimits = protoload.Limits{}

// loadServices reads the descriptors of every upstream with services:
// its descriptor set file, or the upstream's server reflection (a
// connection of its own, closed after). An error names the upstream and
// the file or service.
func loadServices(ctx context.Context, cfg config.Config) (*loadedServices, error) {
	ls := &loadedServices{byUpstream: map[string][]protoreflect.ServiceDescriptor{}}
	h := sha256.New()
	for i, up := range cfg.Upstreams {
		if !up.Dynamic() {
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
			return nil, fmt.Errorf("upstreams[%d] (%s): %s: %w", i, up.Name, up.Source(), err)
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

func loadFiles(ctx context.Context, up config.UpstreamConfig) (*protoregistry.Files, error) {
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
func hasDynamic(c config.Config) bool {
	return slices.ContainsFunc(c.Upstreams, config.UpstreamConfig.Dynamic)
}

// withServices returns c with its run-time services loaded, unless they
// are already (a config config.Load checked, or a kept version).
func withServices(ctx context.Context, c config.Config) (config.Config, error) {
	if loadedOf(c) != nil || !hasDynamic(c) {
		return c, nil
	}
	ls, err := loadServices(ctx, c)
	if err != nil {
		return c, fmt.Errorf("gateway config: %w", err)
	}
	return c.WithLoaded(ls), nil
}

// services returns upstream's loaded services.
func services(c config.Config, upstream string) ([]protoreflect.ServiceDescriptor, error) {
	ls := loadedOf(c)
	if ls == nil {
		return nil, fmt.Errorf("gateway: the services of upstream %s are not loaded", upstream)
	}
	return ls.byUpstream[upstream], nil
}
