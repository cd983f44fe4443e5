package balance

import "time"

// Ejection defaults.
const (
	DefaultConsecutiveFailures = 5
	DefaultBaseEjectionTime    = 30 * time.Second
	DefaultMaxEjectionTime     = 5 * time.Minute
	DefaultMaxEjectionPercent  = 50
)

// Ejection configures passive ejection. The zero value means the defaults.
type Ejection struct {
	// ConsecutiveFailures ejects an address after this many failed calls
	// in a row. Zero means 5; negative turns ejection off.
	ConsecutiveFailures int
	// BaseTime is the first ejection's length; the n-th lasts n*BaseTime.
	// Zero means 30s.
	BaseTime time.Duration
	// MaxTime caps an ejection's length. Zero means 5m.
	MaxTime time.Duration
	// MaxPercent caps the share of addresses out at once; one address may
	// always be out when there are two or more, and one always stays. Zero
	// means 50.
	MaxPercent int
}

func (e Ejection) withDefaults() Ejection {
	if e.ConsecutiveFailures == 0 {
		e.ConsecutiveFailures = DefaultConsecutiveFailures
	}
	if e.BaseTime <= 0 {
		e.BaseTime = DefaultBaseEjectionTime
	}
	if e.MaxTime <= 0 {
		e.MaxTime = DefaultMaxEjectionTime
	}
	if e.MaxPercent <= 0 {
		e.MaxPercent = DefaultMaxEjectionPercent
	}
	return e
}

// Observer receives ejections. Implementations must be safe for concurrent
// use.
type Observer interface {
	// Ejected is called when addr is taken out of upstream's list.
	Ejected(upstream, addr string)
	// Unejected is called when addr comes back.
	Unejected(upstream, addr string)
}

// Option configures a Resolver.
type Option func(*Resolver)

// WithEjection sets passive ejection. Default: Ejection{}, the defaults.
func WithEjection(e Ejection) Option {
	return func(r *Resolver) { r.eject = e }
}

// WithObserver sets where ejections are reported.
func WithObserver(o Observer) Option {
	return func(r *Resolver) { r.observer = o }
}

type nopObserver struct{}

func (nopObserver) Ejected(string, string)   {}
func (nopObserver) Unejected(string, string) {}
