//go:build !linux

package gateway

// openFileLimit is unknown off Linux: http.max_connections defaults to
// config.FallbackMaxConnections there.
func openFileLimit() uint64 { return 0 }
