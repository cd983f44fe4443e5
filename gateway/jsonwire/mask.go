package jsonwire

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// MaskPaths reads value, an update mask in its JSON form (a
// google.protobuf.FieldMask: comma-separated lowerCamel paths) naming
// members of target, the message the body updates, and returns the paths
// in proto names, as the service reads them. "" is no path. Each path is
// one top-level member by its JSON name, as in the body: a proto name
// ("unit_price") is refused with the name to use, as in a body or a query
// parameter, and so is a nested path ("unitPrice.currency"): a member
// named in the mask is set whole from the body. Which members may be
// named is the service's rule; the published document states both
// (package apidoc/rules, Mask).
func MaskPaths(target protoreflect.MessageDescriptor, value string) ([]string, error) {
	if value == "" {
		return nil, nil
	}
	parts := strings.Split(value, ",")
	out := make([]string, len(parts))
	for i, p := range parts {
		fd := target.Fields().ByJSONName(p)
		switch {
		case fd != nil:
			out[i] = string(fd.Name())
			continue
		case p == "":
			return nil, errors.New("want comma-separated member names, got an empty one")
		}
		shown := p
		if len(shown) > 64 {
			shown = shown[:64] + "..."
		}
		if top, _, nested := strings.Cut(p, "."); nested {
			if fd := target.Fields().ByJSONName(top); fd != nil {
				return nil, fmt.Errorf("%q: name the member %s, which is set whole", shown, top)
			}
		}
		if fd := target.Fields().ByTextName(p); fd != nil {
			return nil, fmt.Errorf("%q: use %s", shown, fd.JSONName())
		}
		return nil, fmt.Errorf("%q is not a member of %s", shown, target.Name())
	}
	return out, nil
}
