package apidoc

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/portico-gateway/portico/gateway/apidoc/rules"
	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/protoopt"
	apiv1 "github.com/portico-gateway/portico/gen/portico/api/v1"
)

// operation finishes one generated operation: names, texts, parameters
// with their rules, responses, headers and security. An additional
// binding's operationId is the RPC's plus its path's words, and every
// binding is tagged as its RPC's main binding is. It returns the name of
// the response schema a response_body made unused there (responseBody).
func operation(op *openapi3.Operation, files *protoregistry.Files, verb, path string, schemas openapi3.Schemas) (string, error) {
	md, err := method(files, op.OperationID)
	if err != nil {
		return "", err
	}
	edge := protoopt.Edge(md)
	rule, main := binding(md, verb, path)
	op.OperationID = lowerCamel(string(md.Name()))
	if rule != main {
		op.OperationID += pathWords(dotted.ReplaceAllString(path, "{$2}"))
	}
	desc := clean(op.Description)
	if d := edge.GetDescription(); d != "" {
		desc = d
	}
	op.Description = restText(desc)
	op.Summary = edge.GetSummary()
	if op.Summary == "" {
		op.Summary = summary(op.Description)
	}
	if op.Summary == "" {
		op.Summary = nameSummary(string(md.Name()))
	}
	tagPath := path
	if main != nil {
		_, tagPath = pattern(main)
	}
	op.Tags = []string{tagOf(tagPath)}
	if op.Tags[0] == "" { // a service loaded at run time: its own resource
		op.Tags[0] = string(md.Parent().Name())
	}
	security(op, verb, path, fullName(md))
	for _, p := range op.Parameters {
		if p.Value == nil {
			continue
		}
		p.Value.Description = clean(p.Value.Description)
		if fd := fieldByPath(md.Input(), p.Value.Name); fd != nil && p.Value.Schema != nil && p.Value.Schema.Value != nil {
			rules.Field(fd, p.Value.Schema.Value)
			p.Value.Required = p.Value.Required || rules.Required(fd)
			shortEnum(fd, p.Value.Schema.Value)
			requestEnum(fd, p.Value.Schema.Value)
			mask(md, fd, p.Value.Schema.Value)
		}
	}
	op.Parameters = append(op.Parameters,
		&openapi3.ParameterRef{Ref: "#/components/parameters/" + paramTraceID},
		&openapi3.ParameterRef{Ref: "#/components/parameters/" + paramGrpcTimeout})
	if edge.GetIdempotencyKey() {
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Ref: "#/components/parameters/" + paramIdempotencyKey})
	}
	if edge.GetRespondAsync() {
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Ref: "#/components/parameters/" + paramPrefer})
	}
	op.Responses = responses(op.Responses, edge)
	cut := responseBody(op, md, rule.GetResponseBody(), schemas)
	if md.IsStreamingServer() {
		streamResponse(op, md)
	}
	staleHeaders(op, md)
	if !md.IsStreamingServer() { // the edge refuses conditions on streams (400)
		conditional(op, verb, md.Input())
	}
	if op.RequestBody != nil {
		for _, s := range []int{http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType} {
			op.Responses.Set(strconv.Itoa(s), &openapi3.ResponseRef{Ref: "#/components/responses/" + responseName(s)})
		}
	}
	return cut, nil
}

// responses keeps the generated success body under 200, or 201 when the
// edge answers Created with a Location, and adds the operation's problem
// responses: Common and the option's errors.
func responses(gen *openapi3.Responses, edge *apiv1.Edge) *openapi3.Responses {
	var content openapi3.Content
	if ok := gen.Value("200"); ok != nil && ok.Value != nil {
		content = openapi3.Content{"application/json": ok.Value.Content.Get("application/json")}
	}
	out := openapi3.NewResponses()
	out.Delete("default")
	headers := openapi3.Headers{"X-Trace-Id": {Ref: "#/components/headers/XTraceId"}}
	status, text := http.StatusOK, "OK"
	if edge.GetLocation() != "" {
		status, text = http.StatusCreated, "Created; Location names the new resource."
		headers["Location"] = &openapi3.HeaderRef{Ref: "#/components/headers/Location"}
	}
	if edge.GetIdempotencyKey() {
		headers["Idempotent-Replayed"] = &openapi3.HeaderRef{Ref: "#/components/headers/IdempotentReplayed"}
	}
	rateLimitHeaders(headers)
	out.Set(strconv.Itoa(status), &openapi3.ResponseRef{Value: &openapi3.Response{
		Description: openapi3.Ptr(text), Headers: headers, Content: content,
	}})
	if edge.GetRespondAsync() {
		out.Set(strconv.Itoa(http.StatusAccepted), accepted(headers, content))
	}
	statuses := slices.Clone(Common)
	for _, s := range edge.GetErrors() {
		statuses = append(statuses, int(s))
	}
	for _, s := range statuses {
		out.Set(strconv.Itoa(s), &openapi3.ResponseRef{Ref: "#/components/responses/" + responseName(s)})
	}
	return out
}

// accepted is the 202 of an operation that honours Prefer: respond-async:
// the success's headers plus Preference-Applied, and the resource as
// stored so far (RFC 7240 section 4.1).
func accepted(success openapi3.Headers, content openapi3.Content) *openapi3.ResponseRef {
	headers := openapi3.Headers{"Preference-Applied": {Ref: "#/components/headers/PreferenceApplied"}}
	for k, v := range success {
		headers[k] = v
	}
	// Its own media type, without an example: what is stored so far has
	// members only the finished work sets still null (an accepted order's
	// total and line prices), which the schema declares nullable, but
	// validators do not apply nullable through allOf, so an example with
	// them null would be refused and one without them would be false.
	own := openapi3.Content{}
	for k, mt := range content {
		own[k] = &openapi3.MediaType{Schema: mt.Schema}
	}
	return &openapi3.ResponseRef{Value: &openapi3.Response{
		Description: openapi3.Ptr("Accepted for later (the client sent Prefer: respond-async and the service could not finish now); Location names the resource, whose status says how far it got; members only the finished work sets (an order's total and line prices) are null until then."),
		Headers:     headers, Content: own,
	}}
}

// fieldByPath finds the field a parameter names by its JSON path: "pageSize",
// "item.sku".
func fieldByPath(md protoreflect.MessageDescriptor, path string) protoreflect.FieldDescriptor {
	var fd protoreflect.FieldDescriptor
	for _, part := range strings.Split(path, ".") {
		if md == nil {
			return nil
		}
		if fd = md.Fields().ByJSONName(part); fd == nil {
			return nil
		}
		md = fd.Message()
	}
	return fd
}

// mask gives an update mask parameter the pattern of the names the edge
// and the service accept (rules.Mask): the lowerCamel names of the
// settable members of the message the route's body binds.
func mask(md protoreflect.MethodDescriptor, fd protoreflect.FieldDescriptor, s *openapi3.Schema) {
	rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	body := rule.GetBody()
	if body == "" || body == "*" || strings.Contains(body, ".") {
		return
	}
	target := md.Input().Fields().ByName(protoreflect.Name(body))
	if target == nil || target.Message() == nil || !rules.Mask(fd, target.Message(), s) {
		return
	}
	s.Description = strings.TrimSpace(s.Description + "\n\nThe members to set, by their JSON names, comma-separated: " +
		strings.Join(rules.Settable(target.Message()), ", ") +
		". A member named is set whole from the body (one named but absent from the body is cleared); without updateMask, the members the body holds are set.")
}

// requestEnum leaves out of a parameter's enum the zero value that stands
// for unset (FORMAT_UNSPECIFIED): the edge refuses it in a query.
func requestEnum(fd protoreflect.FieldDescriptor, s *openapi3.Schema) {
	ed := fd.Enum()
	if ed == nil || fd.IsList() || len(s.Enum) == 0 {
		return
	}
	s.Enum = s.Enum[:0]
	for _, n := range jsonwire.RequestNames(ed) {
		s.Enum = append(s.Enum, n)
	}
}
