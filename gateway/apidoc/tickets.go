package apidoc

import (
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portico-gateway/portico/gateway/auth"
)

// schemeTicket is the security scheme of a stream ticket.
const schemeTicket = "streamTicket"

// ticketScheme is the stream ticket's security scheme: the one credential
// the edge reads from a query, on streams only.
func ticketScheme() *openapi3.SecuritySchemeRef {
	return &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
		Type: "apiKey", In: "query", Name: auth.TicketParam,
		Description: "A stream ticket from POST " + auth.TicketsPath + ", for clients that cannot send Authorization (a browser's EventSource): it opens the one path it was issued for, once, within 30 s (streams.ticket_ttl). Expired, used or for another path: 401.",
	}}
}

// streamTickets adds the edge's own operation POST /api/stream-tickets,
// its schemas and the ticket scheme; streamResponse lets each streaming
// operation accept the ticket.
func streamTickets(doc *openapi3.T) {
	c := doc.Components
	c.SecuritySchemes[schemeTicket] = ticketScheme()
	c.Schemas["StreamTicketRequest"] = openapi3.NewSchemaRef("", &openapi3.Schema{
		Type: &openapi3.Types{"object"}, Description: "The stream a ticket is for.", Required: []string{"path"},
		AdditionalProperties: openapi3.AdditionalProperties{Has: new(false)}, // unknown fields are 400, as on every body
		Properties: openapi3.Schemas{"path": openapi3.NewSchemaRef("", &openapi3.Schema{
			Type: &openapi3.Types{"string"}, Pattern: "^/api/[^?#]*$", MaxLength: openapi3.Ptr(uint64(2048)),
			Description: "The path of a streaming operation, escaped as it will be requested, without a query.",
		})},
	})
	c.Schemas["StreamTicket"] = openapi3.NewSchemaRef("", &openapi3.Schema{
		Type: &openapi3.Types{"object"}, Description: "A single-use stream ticket.", Required: []string{"ticket", "url", "expireTime"},
		Properties: openapi3.Schemas{
			"ticket":     str("The opaque ticket: send it as the query parameter ticket."),
			"url":        str("The path with the ticket in its query: open it (new EventSource(url)) before expireTime."),
			"expireTime": openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, Format: "date-time", Description: "When the ticket stops opening its stream."}),
		},
	})
	ok := openapi3.NewResponse().WithDescription("OK: the ticket (answered with Cache-Control: no-store).")
	ok.Content = openapi3.Content{"application/json": &openapi3.MediaType{
		Schema: &openapi3.SchemaRef{Ref: "#/components/schemas/StreamTicket"},
		Example: map[string]any{
			"ticket": "pst1.eyJzdWIiOiJhbGljZSJ9.c2ln", "url": "/api/orders/ord-6f1c2a9e:watch?ticket=pst1.eyJzdWIiOiJhbGljZSJ9.c2ln",
			"expireTime": "2026-12-01T09:30:30Z",
		},
	}}
	ok.Headers = openapi3.Headers{"X-Trace-Id": {Ref: "#/components/headers/XTraceId"}}
	op := &openapi3.Operation{
		OperationID: "createStreamTicket",
		Summary:     "Get a ticket to open a stream",
		Description: "Issues a ticket that opens one streaming operation (GET ...:watch, GET ...:export) at the given path as the caller, once, within 30 s: for clients that cannot send Authorization, such as a browser's EventSource (new EventSource(url)). The ticket is signed, bound to the path, single-use on every edge of the deployment and never logged. The caller must be allowed to GET the path; the stream's own checks (ownership, caps) apply when it opens.",
		Tags:        []string{"Orders"},
		Security:    &openapi3.SecurityRequirements{{schemeBearer: []string{}}, {schemeSignedApp: []string{}}},
		Parameters:  openapi3.Parameters{{Ref: "#/components/parameters/" + paramTraceID}},
		RequestBody: &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithContent(openapi3.Content{
			"application/json": &openapi3.MediaType{
				Schema:  &openapi3.SchemaRef{Ref: "#/components/schemas/StreamTicketRequest"},
				Example: map[string]any{"path": "/api/orders/ord-6f1c2a9e:watch"},
			},
		})},
		Responses: openapi3.NewResponses(openapi3.WithStatus(http.StatusOK, &openapi3.ResponseRef{Value: ok})),
	}
	op.Responses.Delete("default")
	for _, s := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		op.Responses.Set(strconv.Itoa(s), &openapi3.ResponseRef{Ref: "#/components/responses/" + responseName(s)})
	}
	doc.Paths.Set(auth.TicketsPath, &openapi3.PathItem{Post: op})
}

// acceptTicket lets a streaming operation be opened with a stream ticket.
func acceptTicket(op *openapi3.Operation) {
	if op.Security != nil {
		*op.Security = append(*op.Security, openapi3.SecurityRequirement{schemeTicket: []string{}})
	}
}
