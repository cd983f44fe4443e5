package config

// Loaded is what the program serving a config loaded for it from outside
// the document: the gateway's descriptors of the upstreams' run-time
// services (upstreams[].services). It travels with the config, so a
// config checked once is not loaded again when it is applied, and a
// version kept for rollback brings its own back. Digest is part of the
// config's version: changed descriptors make a changed config.
type Loaded interface {
	Digest() string
}

// Loaded returns what WithLoaded attached to c, or nil.
func (c Config) Loaded() Loaded { return c.loaded }

// WithLoaded returns c carrying l.
func (c Config) WithLoaded(l Loaded) Config {
	c.loaded = l
	return c
}

// A Check checks a config against what the program serving it knows
// beyond the document: the gateway's route table (gateway.CheckRoutes).
// Config.Check runs it once the config's fields are valid, before the
// semantic checks; it returns the config with what it loaded for the
// check (WithLoaded).
type Check func(Config) (Config, error)
