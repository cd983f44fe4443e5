package strictyaml

import (
	"errors"
	"reflect"

	"gopkg.in/yaml.v3"
)

// DecodeNode decodes n, a node taken from a larger document (a yaml.Node
// extension field), into v with the same checks as Decode. Errors name the
// field under path (e.g. "upstreams[0].resilience") and the line in the
// original document.
func DecodeNode(n *yaml.Node, path string, v any) error {
	if n == nil || n.Kind == 0 {
		return nil
	}
	c := &checker{}
	c.check(n, reflect.TypeOf(v).Elem(), path)
	if len(c.errs) > 0 {
		return errors.Join(c.errs...)
	}
	return n.Decode(v)
}
