package apidoc

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Media types of a streaming answer (see gateway/eventstream).
const (
	mediaNDJSON = "application/x-ndjson"
	mediaSSE    = "text/event-stream"
	mediaCSV    = "text/csv"
)

// streamResponse replaces a server-streaming operation's 200 body: a
// stream of messages is NDJSON lines or Server-Sent Events, chosen by
// Accept, each carrying the message schema, and ends with a terminal
// problem when it fails after its first message; a stream of
// google.api.HttpBody chunks (an export) is the chunks' bytes in their own
// media type. The operation also answers 406 (an Accept it cannot serve).
func streamResponse(op *openapi3.Operation, md protoreflect.MethodDescriptor) {
	acceptTicket(op)
	ok := op.Responses.Value(strconv.Itoa(http.StatusOK))
	if ok == nil || ok.Value == nil {
		return
	}
	op.Responses.Set(strconv.Itoa(http.StatusNotAcceptable), &openapi3.ResponseRef{Ref: "#/components/responses/" + responseName(http.StatusNotAcceptable)})
	if md.Output().FullName() == "google.api.HttpBody" {
		ok.Value.Description = openapi3.Ptr("OK: the export, written as it is read (no Content-Length), in the media type its parameters choose (format=CSV: text/csv); Accept does not choose it, and an Accept that does not allow it is 406. NDJSON: one object per order, keys as the CSV columns, every value a string (totalMinor, an int64, too) but lineCount, the order's number of lines. A failure after the first bytes cuts the connection, so a truncated export never looks complete: a CSV or NDJSON export always ends with a newline.")
		ok.Value.Content = openapi3.Content{
			mediaNDJSON: &openapi3.MediaType{Schema: openapi3.NewStringSchema().NewRef(), Example: exExportNDJSON},
			mediaCSV:    &openapi3.MediaType{Schema: openapi3.NewStringSchema().NewRef(), Example: exExportCSV},
		}
		return
	}
	var msg *openapi3.SchemaRef
	if mt := ok.Value.Content.Get("application/json"); mt != nil {
		msg = mt.Schema
	}
	line := openapi3.NewObjectSchema()
	line.Description = "One line per message: {\"result\": <message>}. A stream that fails after its first message ends with one {\"error\": <problem>} line; a clean end is the stream closing after its last result."
	line.Properties = openapi3.Schemas{"result": msg, "error": {Ref: "#/components/schemas/Problem"}}
	events := openapi3.NewStringSchema()
	events.Description = "Server-Sent Events: one event per message (the default event type; data is the message's JSON), comments (\": keep-alive\") as heartbeats, and a last event \"end\" (data {}) on a clean end or \"error\" (data: the problem JSON) when the stream fails or the gateway ends it (STREAM_RECONNECT: open it again)."
	ok.Value.Description = openapi3.Ptr("OK: a stream of messages, as application/x-ndjson (the default) or text/event-stream (Accept). An error before the first message is a problem answer with its status.")
	ok.Value.Content = openapi3.Content{
		mediaNDJSON: &openapi3.MediaType{Schema: line.NewRef(), Example: map[string]any{"result": exOrder}},
		mediaSSE:    &openapi3.MediaType{Schema: events.NewRef(), Example: exSSE()},
	}
}

// exSSE is a watch as SSE: PENDING, then CONFIRMED, then the end.
func exSSE() string {
	pending, _ := json.Marshal(with(exOrder, map[string]any{"status": "PENDING", "paymentId": "", "reservationId": ""}))
	confirmed, _ := json.Marshal(exOrder)
	return "data: " + string(pending) + "\n\ndata: " + string(confirmed) + "\n\nevent: end\ndata: {}\n\n"
}

const (
	exExportCSV    = "id,customer,status,totalMinor,currency,lineCount,paymentMethod,failureReason,createTime,updateTime\nord-6f1c2a9e,alice,CONFIRMED,4999,USD,1,pm_card_ok,,2026-12-01T09:30:00Z,2026-12-01T09:30:00Z\n"
	exExportNDJSON = `{"createTime":"2026-12-01T09:30:00Z","currency":"USD","customer":"alice","failureReason":"","id":"ord-6f1c2a9e","lineCount":1,"paymentMethod":"pm_card_ok","status":"CONFIRMED","totalMinor":"4999","updateTime":"2026-12-01T09:30:00Z"}` + "\n"
)
