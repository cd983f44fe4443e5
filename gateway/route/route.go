package route

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Route is one HTTP binding of one RPC.
type Route struct {
	// Method is the HTTP method, e.g. "POST".
	Method string
	// Pattern is the path template, e.g. "/api/orders/{id}:cancel".
	Pattern string
	// Template is Pattern as the OpenAPI document writes it, a dotted
	// variable named by its last part ("/api/inventory/{sku}", not
	// "{item.sku}"): the route's label in metrics, logs and spans.
	Template string
	// RPC is the full gRPC method name, e.g.
	// "/portico.order.v1.OrderService/CancelOrder".
	RPC string
	// Upstream names the upstream serving the RPC.
	Upstream string
	// Input is the RPC's request message.
	Input protoreflect.MessageDescriptor
	// Desc is the RPC's descriptor: its response message and its options
	// (protoopt.Edge). Nil in a Route built by hand.
	Desc protoreflect.MethodDescriptor
	// Body is the body binding: "" (no body), "*" (the whole request) or
	// the name of a top-level field of Input.
	Body string
	// Vars are the field paths (proto names) bound by path variables.
	Vars []string
	// Stream: the RPC is server streaming; the edge answers with a stream
	// of messages (NDJSON or Server-Sent Events) or, for a stream of
	// google.api.HttpBody, the chunks' bytes.
	Stream bool
	// ResponseBody is the rule's response_body: "" (the whole response)
	// or the name of a top-level field of the response message.
	ResponseBody string

	segs []segment
	verb string
}

// Key is "METHOD PATTERN", unique within a Table.
func (r *Route) Key() string { return r.Method + " " + r.Pattern }

// BodyMessage returns the message the JSON body decodes into, or nil when
// the route takes no body.
func (r *Route) BodyMessage() protoreflect.MessageDescriptor {
	switch r.Body {
	case "":
		return nil
	case "*":
		return r.Input
	}
	return r.Input.Fields().ByName(protoreflect.Name(r.Body)).Message()
}

// Bound reports whether the field path (proto names) is bound by the path
// or the body, so the query string must not set it. With body "*" every
// field is bound.
func (r *Route) Bound(path []string) bool {
	if r.Body == "*" {
		return true
	}
	for _, b := range append([]string{r.Body}, r.Vars...) {
		if b == "" {
			continue
		}
		bp := strings.Split(b, ".")
		if hasPrefix(path, bp) || hasPrefix(bp, path) {
			return true
		}
	}
	return false
}

func hasPrefix(s, prefix []string) bool {
	if len(prefix) > len(s) {
		return false
	}
	for i := range prefix {
		if s[i] != prefix[i] {
			return false
		}
	}
	return true
}

// FromService returns the routes of every annotated method of sd, served by
// upstream. Methods without a google.api.http option are not routed;
// client-streaming methods are an error (a REST request is one message).
func FromService(sd protoreflect.ServiceDescriptor, upstream string) ([]*Route, error) {
	var out []*Route
	methods := sd.Methods()
	for i := 0; i < methods.Len(); i++ {
		m := methods.Get(i)
		rule, _ := proto.GetExtension(m.Options(), annotations.E_Http).(*annotations.HttpRule)
		if rule == nil {
			continue
		}
		if m.IsStreamingClient() {
			return nil, fmt.Errorf("route: %s is client streaming; only unary and server-streaming methods can be routed", m.FullName())
		}
		for _, b := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
			r, err := fromRule(m, b, upstream)
			if err != nil {
				return nil, fmt.Errorf("route: %s: %w", m.FullName(), err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// dotted matches a dotted path variable, as gateway/apidoc renames it.
var dotted = regexp.MustCompile(`\{([A-Za-z0-9_]+\.)+([A-Za-z0-9_]+)\}`)

func fromRule(m protoreflect.MethodDescriptor, rule *annotations.HttpRule, upstream string) (*Route, error) {
	method, pattern := methodAndPath(rule)
	if method == "" {
		return nil, fmt.Errorf("http rule has no method and path")
	}
	r := &Route{
		Method:   method,
		Pattern:  pattern,
		Template: dotted.ReplaceAllString(pattern, "{$2}"),
		RPC:      "/" + string(m.Parent().FullName()) + "/" + string(m.Name()),
		Upstream: upstream,
		Input:    m.Input(),
		Desc:     m,
		Stream:   m.IsStreamingServer(),
		Body:     rule.GetBody(),

		ResponseBody: rule.GetResponseBody(),
	}
	var err error
	if r.segs, r.verb, r.Vars, err = parseTemplate(pattern); err != nil {
		return nil, err
	}
	if err := r.checkBindings(); err != nil {
		return nil, err
	}
	return r, nil
}

func methodAndPath(rule *annotations.HttpRule) (string, string) {
	switch p := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return http.MethodGet, p.Get
	case *annotations.HttpRule_Put:
		return http.MethodPut, p.Put
	case *annotations.HttpRule_Post:
		return http.MethodPost, p.Post
	case *annotations.HttpRule_Delete:
		return http.MethodDelete, p.Delete
	case *annotations.HttpRule_Patch:
		return http.MethodPatch, p.Patch
	case *annotations.HttpRule_Custom:
		return strings.ToUpper(p.Custom.GetKind()), p.Custom.GetPath()
	}
	return "", ""
}

// checkBindings verifies the body field and every path variable exist.
func (r *Route) checkBindings() error {
	if r.Body != "" && r.Body != "*" {
		f := r.Input.Fields().ByName(protoreflect.Name(r.Body))
		if f == nil || f.Message() == nil || f.IsList() || f.IsMap() {
			return fmt.Errorf("body %q is not a singular message field of %s", r.Body, r.Input.FullName())
		}
	}
	for _, v := range r.Vars {
		if err := checkPath(r.Input, strings.Split(v, ".")); err != nil {
			return fmt.Errorf("path variable %q: %w", v, err)
		}
	}
	return nil
}

func checkPath(md protoreflect.MessageDescriptor, path []string) error {
	for i, name := range path {
		f := md.Fields().ByName(protoreflect.Name(name))
		if f == nil || f.IsList() || f.IsMap() {
			return fmt.Errorf("%s has no singular field %q", md.FullName(), name)
		}
		if i < len(path)-1 {
			if md = f.Message(); md == nil {
				return fmt.Errorf("%q is not a message", name)
			}
		} else if f.Message() != nil {
			return fmt.Errorf("%q is a message, not a scalar", name)
		}
	}
	return nil
}
