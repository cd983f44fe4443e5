package breaker

// Observer receives every state transition of the interceptor's breakers.
// Implementations must be safe for concurrent use.
type Observer interface {
	// StateChange is called after the breaker called name moved from one
	// state to another.
	StateChange(name string, from, to State)
}

// Option configures UnaryClientInterceptor.
type Option func(*options)

type options struct {
	upstream  string
	settings  Settings
	methods   []string
	observer  Observer
	track     func(*Breaker)
	instances Instances // WithInstances; nil: this breaker judges every call
}

// WithUpstream names the upstream: the breaker's name and the "upstream"
// metadata of CIRCUIT_OPEN errors. Default "upstream".
func WithUpstream(name string) Option {
	return func(o *options) { o.upstream = name }
}

// WithSettings sets the settings of every breaker the interceptor makes.
// Name is filled in by the interceptor; OnStateChange is kept and
// called before the Observer.
func WithSettings(s Settings) Option {
	return func(o *options) { o.settings = s }
}

// WithMethods gives each listed full method ("/pkg.Service/Method") a breaker
// of its own, named "<upstream><method>" ("inventory/pkg.Service/Method").
// Other methods share the upstream's breaker.
func WithMethods(methods ...string) Option {
	return func(o *options) { o.methods = append(o.methods, methods...) }
}

// WithObserver sets where state transitions are reported.
func WithObserver(obs Observer) Option {
	return func(o *options) { o.observer = obs }
}

// WithTracker calls track with every breaker the interceptor makes (the
// upstream's, then each method's), so their State and Counts can be read,
// for example by an admin API.
func WithTracker(track func(*Breaker)) Option {
	return func(o *options) { o.track = track }
}
