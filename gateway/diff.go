package gateway

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Diff returns what changes from a to b (both with defaults applied), one
// line per leaf field in YAML paths, sorted: "+ path: value" added,
// "- path: value" removed, "~ path: old -> new" changed. List entries with
// a name are keyed by it (upstreams[inventory].timeout). Secrets (tokens,
// keys, passwords, credentials in URLs) are redacted.
func Diff(a, b Config) []string {
	fa, fb := Flatten(a), Flatten(b)
	var out []string
	for k, va := range fa {
		vb, ok := fb[k]
		switch {
		case !ok:
			out = append(out, "- "+k+": "+va)
		case va != vb:
			out = append(out, "~ "+k+": "+va+" -> "+vb)
		}
	}
	for k, vb := range fb {
		if _, ok := fa[k]; !ok {
			out = append(out, "+ "+k+": "+vb)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][2:] < out[j][2:] })
	return out
}

// Flatten returns cfg's leaf fields by YAML path, secrets redacted: the
// form Diff compares and the admin API shows.
func Flatten(cfg Config) map[string]string {
	var tree any
	if b, err := yaml.Marshal(cfg); err == nil {
		_ = yaml.Unmarshal(b, &tree)
	}
	out := map[string]string{}
	flatten("", tree, out)
	return out
}

func flatten(path string, v any, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			flatten(join(path, k), e, out)
		}
	case []any:
		if scalars(v) {
			parts := make([]string, len(v))
			for i, e := range v {
				parts[i] = redact(path, fmt.Sprint(e))
			}
			out[path] = "[" + strings.Join(parts, ", ") + "]"
			return
		}
		for i, e := range v {
			key := fmt.Sprint(i)
			if m, ok := e.(map[string]any); ok && m["name"] != nil {
				key = fmt.Sprint(m["name"])
			}
			flatten(path+"["+key+"]", e, out)
		}
	default:
		out[path] = redact(path, fmt.Sprint(v))
	}
}

func join(path, k string) string {
	if strings.ContainsAny(k, " ./[]") {
		k = fmt.Sprintf("[%q]", k)
		return path + k
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

func scalars(v []any) bool {
	for _, e := range v {
		switch e.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// secretWords mark a field whose value is a secret: its last path element
// contains one of them.
var secretWords = []string{"token", "secret", "password", "key", "credential"}

// redact hides secret values: a field named like a secret, and the
// password of a URL.
func redact(path, v string) string {
	last := path[strings.LastIndexAny(path, ".]")+1:]
	for _, w := range secretWords {
		if strings.Contains(strings.ToLower(last), w) && last != "max_body_bytes" {
			return "[REDACTED]"
		}
	}
	if u, err := url.Parse(v); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
			return u.String()
		}
	}
	return v
}

// restartFields are the changed fields that apply only at start: the
// listeners and the HTTP server's own timeouts.
func restartFields(a, b Config) []string {
	var out []string
	add := func(name string, changed bool) {
		if changed {
			out = append(out, name)
		}
	}
	add("listen", a.Listen != b.Listen)
	add("admin_listen", a.AdminListen != b.AdminListen)
	add("http.read_header_timeout", a.HTTP.ReadHeaderTimeout != b.HTTP.ReadHeaderTimeout)
	add("http.read_timeout", a.HTTP.ReadTimeout != b.HTTP.ReadTimeout)
	add("http.idle_timeout", a.HTTP.IdleTimeout != b.HTTP.IdleTimeout)
	return out
}

func diffCounts(diff []string) (added, removed, changed int) {
	for _, d := range diff {
		switch d[0] {
		case '+':
			added++
		case '-':
			removed++
		default:
			changed++
		}
	}
	return added, removed, changed
}

// summarize bounds a diff for one log line.
func summarize(diff []string) []string {
	const max = 20
	if len(diff) <= max {
		return diff
	}
	return append(slices.Clone(diff[:max]), fmt.Sprintf("... and %d more", len(diff)-max))
}
