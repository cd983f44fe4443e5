package deploy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/interceptors"
)

// modulePath is the repository's module; a type's package path below it
// is a directory of the repository.
const modulePath = "github.com/portico-gateway/portico"

// field is one row of the config reference.
type field struct {
	key, typ, def, doc string
}

// fieldDocs reads the doc comment of every field of the named struct types
// in one package's source. A field without a comment of its own shares the
// comment of the field before it when that comment names it (Go's way of
// documenting two fields at once: "InitialBackoff and MaxBackoff ...").
type fieldDocs struct {
	repoRoot string
	cache    map[string]map[string]map[string]string // pkg -> type -> field -> doc
}

func (d *fieldDocs) doc(t reflect.Type, f reflect.StructField) (string, error) {
	if d.cache == nil {
		d.cache = map[string]map[string]map[string]string{}
	}
	pkg := t.PkgPath()
	if _, ok := d.cache[pkg]; !ok {
		rel, ok := strings.CutPrefix(pkg, modulePath)
		if !ok {
			return "", fmt.Errorf("%s is outside the module", pkg)
		}
		types, err := structDocs(filepath.Join(d.repoRoot, filepath.FromSlash(rel)))
		if err != nil {
			return "", err
		}
		d.cache[pkg] = types
	}
	return d.cache[pkg][t.Name()][f.Name], nil
}

// structDocs parses dir and returns each struct type's field docs.
func structDocs(dir string) (map[string]map[string]string, error) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				if st, ok := ts.Type.(*ast.StructType); ok {
					out[ts.Name.Name] = structFieldDocs(st)
				}
				return false
			})
		}
	}
	return out, nil
}

func structFieldDocs(st *ast.StructType) map[string]string {
	docs := map[string]string{}
	prev := ""
	for _, f := range st.Fields.List {
		doc := strings.Join(strings.Fields(f.Doc.Text()), " ")
		for _, name := range f.Names {
			switch {
			case doc != "":
				docs[name.Name] = doc
			case strings.Contains(prev, name.Name):
				docs[name.Name] = prev
			}
		}
		if doc != "" {
			prev = doc
		}
	}
	return docs
}

// configReference walks config.Config and returns one row per YAML key,
// with its default read from a parsed minimal config (the edge's chain
// defaults for an upstream's resilience block).
func configReference(repoRoot string, root reflect.Type, defaults reflect.Value) ([]field, []string, error) {
	w := &walker{docs: fieldDocs{repoRoot: repoRoot}}
	err := w.walk("", root, defaults)
	return w.rows, w.undocumented, err
}

type walker struct {
	docs         fieldDocs
	rows         []field
	undocumented []string
}

func (w *walker) walk(prefix string, t reflect.Type, def reflect.Value) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		key := prefix + name
		doc, err := w.docs.doc(t, f)
		if err != nil {
			return err
		}
		if doc == "" {
			w.undocumented = append(w.undocumented, fmt.Sprintf("%s (%s.%s)", key, t, f.Name))
		}
		var fv reflect.Value
		if def.IsValid() {
			fv = def.Field(i)
		}
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Duration]():
			w.rows = append(w.rows, field{key: key, typ: "section", def: "", doc: doc})
			if err := w.walk(key+".", ft, fv); err != nil {
				return err
			}
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			w.rows = append(w.rows, field{key: key, typ: "list", def: "", doc: doc})
			var first reflect.Value
			if fv.IsValid() && fv.Len() > 0 {
				first = fv.Index(0)
			}
			if err := w.walk(key+"[].", ft.Elem(), first); err != nil {
				return err
			}
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			w.rows = append(w.rows, field{key: key, typ: "map", def: "", doc: doc})
			if err := w.walk(key+".KEY.", ft.Elem(), reflect.Value{}); err != nil {
				return err
			}
		default:
			w.rows = append(w.rows, field{key: key, typ: typeName(ft), def: valueText(fv), doc: doc})
		}
	}
	return nil
}

func typeName(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "duration"
	case t.Kind() == reflect.Pointer:
		return typeName(t.Elem())
	case t.Kind() == reflect.Slice:
		return "list of " + typeName(t.Elem())
	case t.Kind() == reflect.Map:
		return "map of " + typeName(t.Elem())
	case t.Kind() == reflect.Float64:
		return "number"
	}
	return t.Kind().String()
}

// valueText renders a default: "" for none or zero (the meaning column
// says what zero means), "off" for a negative duration (the feature's off
// switch).
func valueText(v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	switch x := v.Interface().(type) {
	case time.Duration:
		if x < 0 {
			return "off"
		}
		if x == 0 {
			return ""
		}
		return x.String()
	case string:
		if x == "" {
			return ""
		}
		return fmt.Sprintf("`%s`", x)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		return valueText(v.Elem())
	case reflect.Slice, reflect.Map:
		return ""
	}
	if v.IsZero() {
		return ""
	}
	return fmt.Sprint(v.Interface())
}

// edgeDefaults is the Config config.Parse makes of a minimal document (the
// upstreams alone), with the first upstream's resilience block spelled out as
// the edge runs it: interceptors.Defaults under UpstreamConfig.Chain.
func edgeDefaults(t *testing.T) config.Config {
	t.Helper()
	var doc strings.Builder
	doc.WriteString("upstreams:\n")
	for _, u := range config.Dev(1).Upstreams { // one per upstream the routes name
		fmt.Fprintf(&doc, "  - {name: %s, addresses: [%q]}\n", u.Name, u.Addresses[0])
	}
	cfg, err := config.Parse([]byte(doc.String()), gateway.CheckRoutes)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Upstreams[0].Name = "" // required, no default
	chain := cfg.Upstreams[0].Chain()
	res := interceptors.Defaults()
	res.Timeout = chain.Timeout
	res.HealthCheck = chain.HealthCheck
	cfg.Upstreams[0].Resilience = res
	return cfg
}

// referenceTable renders the rows as the operator's page shows them.
func referenceTable(rows []field) string {
	var b strings.Builder
	b.WriteString("| key | type | default (blank: none, or zero as the meaning says) | meaning, and what zero means |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.key, r.typ, r.def, strings.ReplaceAll(r.doc, "|", `\|`))
	}
	return b.String()
}
