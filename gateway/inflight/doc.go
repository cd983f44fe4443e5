// Package inflight counts one upstream connection's calls in flight per
// instance (the remote address each call's stream was opened to), for the
// admin API.
//
// A Counter is a grpc-go client stats.Handler: install it on the
// connection with grpc.WithStatsHandler. A call attempt counts from the
// moment its stream is opened on an instance's transport (stats.OutHeader,
// which carries the remote address) until it ends (stats.End, whose
// context carries that transport's peer). An attempt that never got a
// stream (refused connection, a pick that timed out) is never counted;
// its End carries the caller's context, whose peer, if any (a call made
// inside a gRPC server carries that server's caller), is never an
// instance's listening address, so it matches no counter.
// Retries made by interceptors are separate calls, each counted on its
// own instance.
//
// Why not in the client chain: an interceptor learns the peer only after
// the call returns (grpc.Peer is filled on completion), so a call in
// flight has no address there; the stats events are grpc-go's only public
// view of the instance while the call runs.
//
// Only TCP peers are counted (IPv4-mapped IPv6 addresses are taken as
// IPv4). The hot path takes no lock and allocates nothing once an
// address has been seen: a copy-on-write map of atomic counters. The map
// keeps one counter per address the connection ever opened a stream to,
// for the connection's lifetime. A Counter is safe for concurrent use.
package inflight
