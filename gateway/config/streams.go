package config

import (
	"time"

	"github.com/portico-gateway/portico/gateway/auth"
)

// Defaults of the streams section.
const (
	// DefaultMaxStreams caps the streams open at one edge.
	DefaultMaxStreams = 10000
	// DefaultMaxStreamsPerCaller caps the streams one caller has open.
	DefaultMaxStreamsPerCaller = 16
	// DefaultStreamMaxDuration is the longest a stream stays open; then it
	// ends with a terminal event that says to reconnect.
	DefaultStreamMaxDuration = time.Hour
	// DefaultStreamIdleTimeout ends a stream whose upstream sent nothing
	// for so long (heartbeats do not count).
	DefaultStreamIdleTimeout = 5 * time.Minute
	// DefaultStreamHeartbeat is the interval of SSE keep-alive comments.
	DefaultStreamHeartbeat = 15 * time.Second
	// DefaultStreamWriteTimeout bounds one write to a stream's client: a
	// client that takes no bytes for so long is cut, and its upstream call
	// cancelled.
	DefaultStreamWriteTimeout = 10 * time.Second
	// MaxStreamDuration bounds max_duration and idle_timeout.
	MaxStreamDuration = 24 * time.Hour
)

// StreamsConfig bounds the server-streaming routes (GET /api/orders/{id}:watch,
// GET /api/orders:export): NDJSON and Server-Sent Events answers. A stream
// does not take a slot of shed.max_in_flight or shed.max_in_flight_per_caller
// and has no route timeout; these caps and durations bound it instead. A
// stream counts against limits when it opens, once.
type StreamsConfig struct {
	// MaxOpen caps the streams open at this edge; beyond it a new stream
	// is 503 OVERLOADED. Zero means DefaultMaxStreams; -1 means no cap.
	MaxOpen int `yaml:"max_open,omitempty"`
	// MaxPerCaller caps the streams one caller (tenant and subject) has
	// open; beyond it a new one is 429 TOO_MANY_STREAMS. Zero means
	// DefaultMaxStreamsPerCaller; -1 means no cap.
	MaxPerCaller int `yaml:"max_per_caller,omitempty"`
	// MaxDuration is the longest a stream stays open; it then ends with the
	// terminal problem STREAM_RECONNECT. Zero means
	// DefaultStreamMaxDuration; at most 24h. routes.overrides may set it
	// per route.
	MaxDuration time.Duration `yaml:"max_duration,omitempty"`
	// IdleTimeout ends a stream (STREAM_RECONNECT) whose upstream sent no
	// message for this long. Zero means DefaultStreamIdleTimeout; at most
	// 24h. routes.overrides may set it per route.
	IdleTimeout time.Duration `yaml:"idle_timeout,omitempty"`
	// Heartbeat is the interval of the keep-alive comments of an SSE
	// stream. Zero means DefaultStreamHeartbeat; -1 means none.
	Heartbeat time.Duration `yaml:"heartbeat,omitempty"`
	// WriteTimeout bounds each write to the client: a client that reads
	// too slowly for one message (or heartbeat) to leave within it is cut,
	// so the edge never buffers more than one message per stream, and the
	// upstream call is cancelled. Zero means DefaultStreamWriteTimeout.
	WriteTimeout time.Duration `yaml:"write_timeout,omitempty"`
	// TicketTTL is how long a stream ticket (POST /api/stream-tickets, for
	// a browser's EventSource, which cannot send Authorization) can be
	// redeemed; each opens one stream. Zero means auth.DefaultTicketTTL
	// (30s); at most auth.MaxTicketTTL (5m).
	TicketTTL time.Duration `yaml:"ticket_ttl,omitempty"`
}

func (s StreamsConfig) withDefaults() StreamsConfig {
	if s.MaxOpen == 0 {
		s.MaxOpen = DefaultMaxStreams
	}
	if s.MaxPerCaller == 0 {
		s.MaxPerCaller = DefaultMaxStreamsPerCaller
	}
	if s.MaxDuration == 0 {
		s.MaxDuration = DefaultStreamMaxDuration
	}
	if s.IdleTimeout == 0 {
		s.IdleTimeout = DefaultStreamIdleTimeout
	}
	if s.Heartbeat == 0 {
		s.Heartbeat = DefaultStreamHeartbeat
	}
	if s.WriteTimeout == 0 {
		s.WriteTimeout = DefaultStreamWriteTimeout
	}
	if s.TicketTTL == 0 {
		s.TicketTTL = auth.DefaultTicketTTL
	}
	return s
}

func (s StreamsConfig) validate(v *validator) {
	if s.MaxOpen < -1 {
		v.add("streams.max_open", "want a positive cap, or -1 for none, got %d", s.MaxOpen)
	}
	if s.MaxPerCaller < -1 {
		v.add("streams.max_per_caller", "want a positive cap, or -1 for none, got %d", s.MaxPerCaller)
	}
	v.within("streams.max_duration", s.MaxDuration, 0, MaxStreamDuration)
	v.within("streams.idle_timeout", s.IdleTimeout, 0, MaxStreamDuration)
	if s.Heartbeat != -1 {
		v.within("streams.heartbeat", s.Heartbeat, 0, time.Hour)
	}
	v.within("streams.write_timeout", s.WriteTimeout, 0, time.Hour)
	v.within("streams.ticket_ttl", s.TicketTTL, 0, auth.MaxTicketTTL)
}
