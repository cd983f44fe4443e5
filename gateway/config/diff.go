package config

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Diff returns what changes from a to b (both with defaults applied), one
// line per leaf field in YAML paths, sorted: "+ path: value" added,
// "- path: value" removed, "~ path: old -> new" changed. List entries are
// keyed by their name, or by their subject (auth.tokens[alice].role), when
// every entry has a distinct one, else by position (upstreams[inventory].timeout). Secrets (tokens,
// keys, passwords, credentials and query values in URLs; not the paths of
// files or the names of variables that hold them) are never shown: a changed one
// reads "~ path: [REDACTED] -> [REDACTED]", and a side already redacted
// (an admin API's /admin/config) is not compared.
func Diff(a, b Config) []string {
	fa, fb := leaves(a), leaves(b)
	var out []string
	for k, va := range fa {
		vb, ok := fb[k]
		switch {
		case !ok:
			out = append(out, "- "+k+": "+va.show())
		case va.raw == redacted || vb.raw == redacted:
		case va.raw != vb.raw:
			out = append(out, "~ "+k+": "+va.show()+" -> "+vb.show())
		}
	}
	for k, vb := range fb {
		if _, ok := fa[k]; !ok {
			out = append(out, "+ "+k+": "+vb.show())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][2:] < out[j][2:] })
	return out
}

// redacted replaces a secret wherever the edge shows config.
const redacted = "[REDACTED]"

// leaf is one field's value and whether it is a secret.
type leaf struct {
	raw    string
	secret bool
}

func (l leaf) show() string {
	if l.secret {
		return redactValue(l.raw)
	}
	return l.raw
}

// Redacted returns cfg as a YAML-shaped tree (maps, lists, scalars) with
// every secret replaced by "[REDACTED]": what the admin API shows, and
// what Decode reads back for a diff.
func Redacted(cfg Config) any {
	var tree any
	if b, err := yaml.Marshal(cfg); err == nil {
		_ = yaml.Unmarshal(b, &tree)
	}
	return redactTree("", tree)
}

func redactTree(path string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = redactTree(join(path, k), e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = redactTree(path, e)
		}
		return v
	case string:
		if secretField(path) {
			return redactValue(v)
		}
		return redactURL(v)
	}
	return v
}

// leaves returns cfg's leaf fields by YAML path.
func leaves(cfg Config) map[string]leaf {
	var tree any
	if b, err := yaml.Marshal(cfg); err == nil {
		_ = yaml.Unmarshal(b, &tree)
	}
	out := map[string]leaf{}
	flatten("", tree, out)
	return out
}

func flatten(path string, v any, out map[string]leaf) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			flatten(join(path, k), e, out)
		}
	case []any:
		if scalars(v) {
			parts := make([]string, len(v))
			for i, e := range v {
				parts[i] = fmt.Sprint(e)
			}
			out[path] = leaf{"[" + strings.Join(parts, ", ") + "]", secretField(path)}
			return
		}
		keys := entryKeys(v)
		for i, e := range v {
			flatten(path+"["+keys[i]+"]", e, out)
		}
	default:
		// Only a string holds a secret: a number or a flag under a
		// secret-sounding name (auth.max_token_bytes) is shown.
		s, isString := v.(string)
		if !isString {
			s = fmt.Sprint(v)
		}
		out[path] = leaf{s, isString && secretField(path) || redactURL(s) != s}
	}
}

// keyFields name a list entry, in order of preference: upstreams and
// route groups by name, auth.tokens by subject. A field is used only when
// every entry of the list has a distinct value for it; otherwise entries
// are keyed by position.
var keyFields = []string{"name", "subject", "id"}

// entryKeys returns the key of each entry of a list of maps, so that an
// entry added at the top of the list reads as one added entry, not as
// every later entry changed (auth.tokens[1].role: reader -> admin).
func entryKeys(v []any) []string {
	keys := make([]string, len(v))
	for _, f := range keyFields {
		seen := map[string]bool{}
		for i, e := range v {
			m, _ := e.(map[string]any)
			k, ok := m[f].(string)
			if !ok || k == "" || seen[k] {
				seen = nil
				break
			}
			seen[k], keys[i] = true, k
		}
		if seen != nil {
			return keys
		}
	}
	for i := range v {
		keys[i] = fmt.Sprint(i)
	}
	return keys
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
var secretWords = []string{"token", "secret", "password", "passwd", "key", "credential"}

// referenceSuffixes mark a field that names where a secret is kept, which
// is not itself a secret: a file's path (identity.keys_file,
// tls.key_file) or an environment variable's name (identity.keys_env).
// Shown, they tell an operator which file or variable the edge reads.
var referenceSuffixes = []string{"_file", "_env"}

func secretField(path string) bool {
	last := strings.ToLower(path[strings.LastIndexAny(path, ".]")+1:])
	for _, s := range referenceSuffixes {
		if strings.HasSuffix(last, s) {
			return false
		}
	}
	for _, w := range secretWords {
		if strings.Contains(last, w) {
			return true
		}
	}
	return false
}

// redactValue hides a secret value: a URL keeps all but its password and
// query values,
// anything else becomes "[REDACTED]".
func redactValue(v string) string {
	if r := redactURL(v); r != v {
		return r
	}
	return redacted
}

// redactURL hides the secrets of a URL: the password of its userinfo
// ("redis://user:REDACTED@host") and, in an absolute URL with a host, the
// value of every query parameter ("?api_key=REDACTED"; the keys stay, so
// an operator still sees which parameters are set). Anything else is
// returned unchanged.
func redactURL(v string) string {
	u, err := url.Parse(v)
	if err != nil {
		return v
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
			changed = true
		}
	}
	if u.Scheme != "" && u.Host != "" && u.RawQuery != "" {
		if q := redactQuery(u.RawQuery); q != u.RawQuery {
			u.RawQuery, u.ForceQuery = q, false
			changed = true
		}
	}
	if !changed {
		return v
	}
	return u.String()
}

// redactQuery replaces the value of every "key=value" pair of a raw query
// with REDACTED, keeping the keys and their order.
func redactQuery(raw string) string {
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=REDACTED"
		}
	}
	return strings.Join(parts, "&")
}
