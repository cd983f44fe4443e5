package apidoc

import (
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Tag is one REST resource of the document: the operations whose path
// starts with Prefix carry its Name. The document's tags are these, not
// the gRPC services that implement them, so a generated client groups
// its calls the way a REST caller sees the API.
type Tag struct {
	Name, Prefix, Description string
}

// Tags are the document's resources, in the order the document lists them.
var Tags = []Tag{
	{"Orders", "/api/orders", "Place, read and cancel orders. A customer sees only their own orders; admin and reader see every customer's. Creating one reserves the stock, charges the payment method and commits the reservation, or fails without holding anything."},
	{"Inventory", "/api/inventory", "The catalogue and its stock. Anyone with a token may read it; only admin may add or change items."},
	{"Reservations", "/api/reservations", "Stock held for an order (admin): reserve, then either commit (reserved stock becomes sold) or release (it becomes available again). The order service does this itself for every order."},
	{"Payments", "/api/payments", "Charges and refunds (admin). Payment methods are test methods: pm_card_ok captures, pm_card_declined and pm_card_insufficient_funds decline."},
}

// tagOf is the name of the Tag whose Prefix path starts with.
func tagOf(path string) string {
	for _, t := range Tags {
		if path == t.Prefix || strings.HasPrefix(path, t.Prefix+"/") || strings.HasPrefix(path, t.Prefix+":") {
			return t.Name
		}
	}
	return ""
}

// ownTags declares the tags operations carry beyond Tags (a service loaded
// at run time is tagged with its name), described by the service's comment.
func ownTags(doc *openapi3.T, files *protoregistry.Files) {
	declared := map[string]bool{}
	for _, t := range doc.Tags {
		declared[t.Name] = true
	}
	for _, p := range doc.Paths.InMatchingOrder() {
		for _, op := range doc.Paths.Value(p).Operations() {
			for _, name := range op.Tags {
				if declared[name] {
					continue
				}
				declared[name] = true
				desc := "The operations of the " + name + " service."
				files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
					if sd := f.Services().ByName(protoreflect.Name(name)); sd != nil {
						if c := clean(f.SourceLocations().ByDescriptor(sd).LeadingComments); c != "" {
							desc = c
						}
					}
					return true
				})
				doc.Tags = append(doc.Tags, &openapi3.Tag{Name: name, Description: desc})
			}
		}
	}
}
