// Package strictyaml decodes one YAML document into a Go struct strictly and
// names the offending field path in every error, so a config mistake reads
// "upstreams[0].adresses: unknown field (line 7)" rather than a Go type name.
//
// Decode checks the whole document against the target's yaml tags before
// decoding: unknown keys, repeated keys, a mapping where a list belongs,
// scalars that do not decode into their field (a duration without a unit,
// text in an integer), and more than one document are all errors; every
// error found is reported, joined. Aliases are checked where they are used,
// so a document whose aliases expand it past ten times its own size (plus
// 100,000 nodes) is refused as excessive aliasing, before its errors pile
// up. yaml.Node fields take any value and decode later (opaque extension
// points). The final decode uses go.yaml.in/yaml/v3 (the maintained
// continuation of go.yaml.in/yaml/v3) with
// KnownFields, so the two can never disagree silently.
package strictyaml
