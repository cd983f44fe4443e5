package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/internal/suggest"
)

var (
	nodeType     = reflect.TypeOf(yaml.Node{})
	durationType = reflect.TypeOf(time.Duration(0))
)

// Decode decodes the single YAML document in data into v, a pointer to a
// struct. An empty document leaves v unchanged.
func Decode(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("malformed YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("more than one YAML document")
	}
	limit := aliasSlack + aliasFactor*countNodes(&doc)
	c := &checker{budget: limit}
	c.check(&doc, reflect.TypeOf(v).Elem(), "")
	if c.budget < 0 {
		return fmt.Errorf("document contains excessive aliasing: its anchors and aliases expand it to more than %d nodes", limit)
	}
	if len(c.errs) > 0 {
		return errors.Join(c.errs...)
	}
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	return strict.Decode(v)
}

// The check follows aliases, so a document of a few kilobytes whose
// aliases nest (a list of aliases to a list of aliases ...) would expand
// to millions of nodes and as many errors. The walk may visit at most
// aliasSlack plus aliasFactor times the nodes the document holds; beyond
// that the document is refused, as yaml.v3 refuses excessive aliasing when
// it decodes.
const (
	aliasSlack  = 100_000
	aliasFactor = 10
)

type checker struct {
	errs   []error
	budget int // node visits left; negative once the walk went over
}

// countNodes counts the nodes n holds, an alias counting once.
func countNodes(n *yaml.Node) int {
	total := 1
	for _, c := range n.Content {
		total += countNodes(c)
	}
	return total
}

func (c *checker) fail(n *yaml.Node, path, format string, args ...any) {
	if path == "" {
		path = "(document)"
	}
	c.errs = append(c.errs, fmt.Errorf("%s: %s (line %d)", path, fmt.Sprintf(format, args...), n.Line))
}

// check walks node against t.
func (c *checker) check(n *yaml.Node, t reflect.Type, path string) {
	if c.budget < 0 {
		return
	}
	if c.budget--; c.budget < 0 {
		return
	}
	switch {
	case n.Kind == yaml.DocumentNode:
		if len(n.Content) > 0 {
			c.check(n.Content[0], t, path)
		}
		return
	case n.Kind == yaml.AliasNode:
		c.check(n.Alias, t, path)
		return
	case t == nodeType || t == reflect.PointerTo(nodeType):
		return
	case n.Tag == "!!null":
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		c.object(n, t, path)
	case reflect.Slice:
		c.list(n, t, path)
	case reflect.Map:
		c.mapping(n, t, path)
	default:
		c.scalar(n, t, path)
	}
}

func (c *checker) object(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		c.fail(n, path, "want a mapping of fields")
		return
	}
	fields := fieldsOf(t)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		if seen[k.Value] {
			c.fail(k, p, "repeated key")
			continue
		}
		seen[k.Value] = true
		ft, ok := fields[k.Value]
		if !ok {
			c.fail(k, p, "unknown field")
			if hint := suggest.DidYouMean(k.Value, slices.Sorted(maps.Keys(fields))); hint != "" {
				last := len(c.errs) - 1
				c.errs[last] = fmt.Errorf("%w%s", c.errs[last], hint) // after the line, where the reader's eye ends
			}
			continue
		}
		c.check(v, ft, p)
	}
}

func (c *checker) list(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.SequenceNode {
		c.fail(n, path, "want a list")
		return
	}
	for i, e := range n.Content {
		c.check(e, t.Elem(), path+"["+strconv.Itoa(i)+"]")
	}
}

func (c *checker) mapping(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		c.fail(n, path, "want a mapping")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := path + "[" + strconv.Quote(k.Value) + "]"
		if seen[k.Value] {
			c.fail(k, p, "repeated key")
			continue
		}
		seen[k.Value] = true
		c.scalar(k, t.Key(), p)
		c.check(v, t.Elem(), p)
	}
}

func (c *checker) scalar(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.ScalarNode {
		c.fail(n, path, "want %s", describe(t))
		return
	}
	// yaml.v3 truncates a float into an integer field (0.5 becomes 0), so
	// an integer field takes only an integer scalar.
	isInt := t != durationType && t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64
	if isInt && n.ShortTag() == "!!float" {
		c.fail(n, path, "want %s, got %q", describe(t), n.Value)
		return
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		c.fail(n, path, "want %s, got %q", describe(t), n.Value)
	}
}

func describe(t reflect.Type) string {
	switch {
	case t == durationType:
		return "a duration with a unit, such as 250ms or 5s"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "an integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	}
	return "a string"
}

// fieldsOf maps the yaml keys of t's exported fields to their types.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range fieldsOf(f.Type) {
				m[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f.Type
	}
	return m
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
