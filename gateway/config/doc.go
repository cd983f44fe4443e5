// Package config is the edge's configuration: the schema of its one YAML
// document (Config and its sections, each field documenting its default
// and what zero means), the defaults (the Default* constants,
// Config.WithDefaults), loading (Load, Parse, Decode), the dev profile
// (Dev, DevLimits), validation, and the diff and redaction the admin API
// and check-config show.
//
// # Checks
//
// Load and Parse decode strictly (unknown keys, wrong types and duplicate
// keys are errors naming the field path), fill in defaults, and report
// every problem at once, each naming its field path: the fields' forms
// and ranges first; then, once those pass, each Check the caller gives
// (package gateway's CheckRoutes checks the config against the route
// table: override keys, policy selectors, limit and shed groups); then
// the semantic checks (check.go: values well-formed but wrong, such as a
// cloud metadata address or a retry that can never run).
//
// Package gateway builds the running edge from a Config; this package
// knows nothing of it. A Config is a value: safe to copy and to share
// between goroutines once built.
package config
