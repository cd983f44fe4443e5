package gateway

import (
	"context"
	"strconv"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/health"
	"github.com/portico-gateway/portico/gateway/inflight"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/balance"
)

// maxInstanceChecks bounds the instances one GET /admin/upstreams checks
// (each on a connection of its own, all at once, each within the health
// timeout); instances beyond it are reported UNCHECKED.
const maxInstanceChecks = 64

// Unchecked is an instance's health when it was not checked: beyond
// maxInstanceChecks, or the check could not be set up.
const Unchecked = "UNCHECKED"

// InstanceInfo is one instance of an upstream on /admin/upstreams: its
// ejection state (from the chain's resolver), its own health and the
// calls in flight to it.
type InstanceInfo struct {
	balance.Instance
	// Health is grpc.health.v1 Check of the upstream's health service on
	// a connection to this address alone: UP (SERVING), DOWN (anything
	// else, an error or the health timeout) or UNCHECKED.
	Health string `json:"health"`
	// InFlight counts the API calls in flight to this address over the
	// upstream's connection (inflight.Counter); absent when not counted
	// (an edge without the client chain, or an address that is not an
	// IP:port).
	InFlight *int64 `json:"inFlight,omitempty"`
}

// instanceInfos returns each upstream's instances (ups[i]'s chain state in
// chains[i], nil without one) with their health, checked in parallel.
func (s *Server) instanceInfos(ctx context.Context, sn *snapshot, chains []*interceptors.State) [][]InstanceInfo {
	out := make([][]InstanceInfo, len(sn.cfg.Upstreams))
	type checked struct{ i, j int }
	var deps []health.Dependency
	var at []checked
	var conns []*grpc.ClientConn
	defer func() {
		for _, cc := range conns {
			_ = cc.Close()
		}
	}()
	for i, up := range sn.cfg.Upstreams {
		out[i] = s.instancesOf(up, sn, chains[i])
		for j := range out[i] {
			inst := &out[i][j]
			inst.Health = Unchecked
			if len(deps) == maxInstanceChecks {
				continue
			}
			one := up
			one.Addresses = []string{inst.Addr}
			cc, err := Dial(ctx, one)
			if err != nil {
				continue
			}
			conns = append(conns, cc)
			deps = append(deps, health.Dependency{Name: strconv.Itoa(len(deps)), Service: up.HealthService, Conn: cc})
			at = append(at, checked{i, j})
		}
	}
	rep := health.NewChecker("instances", deps, sn.cfg.Health.Timeout).Check(ctx)
	for k, d := range rep.Dependencies {
		out[at[k].i][at[k].j].Health = d.Status
	}
	return out
}

// instancesOf lists up's instances: the chain's (with ejection state) and
// their calls in flight, or without a chain the configured IP:port
// addresses.
func (s *Server) instancesOf(up config.UpstreamConfig, sn *snapshot, chain *interceptors.State) []InstanceInfo {
	var insts []balance.Instance
	switch {
	case chain != nil:
		insts = chain.Instances
	case interceptors.HostPorts(up.Addresses):
		for _, a := range up.Addresses {
			insts = append(insts, balance.Instance{Addr: a})
		}
	}
	var calls *inflight.Counter
	if s.o.upstreams != nil && chain != nil {
		calls = s.o.upstreams.inFlight(sn.upstreams[up.Name].cc)
	}
	out := make([]InstanceInfo, 0, len(insts))
	for _, in := range insts {
		info := InstanceInfo{Instance: in}
		if calls != nil {
			if n, ok := calls.InFlight(in.Addr); ok {
				info.InFlight = &n
			}
		}
		out = append(out, info)
	}
	return out
}
