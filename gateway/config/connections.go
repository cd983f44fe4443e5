package config

import "math"

// The default of http.max_connections (HTTPConfig.MaxConnections), from
// the process's open-file limit: every client connection holds a
// descriptor, and the edge needs others to dial upstreams, read files
// and serve the admin listener. When they run out, accept fails with
// EMFILE and so does every dial, so the cap keeps a share back.
const (
	// MinConnectionReserve is the least the default keeps back from the
	// open-file limit; the reserve is a fifth of the limit when larger.
	MinConnectionReserve = 256
	// MinDefaultMaxConnections is the least the default is, however low
	// the open-file limit.
	MinDefaultMaxConnections = 64
	// FallbackMaxConnections is the default where the open-file limit is
	// unknown (not Linux) or unlimited.
	FallbackMaxConnections = 4096
)

// DefaultMaxConnections is http.max_connections's default for a soft
// open-file limit of nofile descriptors; 0 means unknown or unlimited.
// A fifth in reserve scales with the upstreams a large edge dials; 256
// covers a small one's (a few upstreams' pools, config, TLS and key
// files, the admin listener and its clients).
func DefaultMaxConnections(nofile uint64) int {
	if nofile == 0 || nofile > math.MaxInt32 {
		return FallbackMaxConnections
	}
	n := int(nofile)
	return max(n-max(MinConnectionReserve, n/5), MinDefaultMaxConnections)
}
