package rpcerr

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// reasonPrefix starts every typev1.Reason value's name; the ErrorInfo
// reason is the rest.
const reasonPrefix = "REASON_"

// ReasonName returns r's ErrorInfo reason: its name without the REASON_
// prefix, e.g. "INSUFFICIENT_STOCK".
func ReasonName(r typev1.Reason) string {
	return strings.TrimPrefix(r.String(), reasonPrefix)
}

// ParseReason returns the Reason whose ErrorInfo reason is s.
func ParseReason(s string) (typev1.Reason, bool) {
	n, ok := typev1.Reason_value[reasonPrefix+s]
	if !ok || n == 0 {
		return typev1.Reason_REASON_UNSPECIFIED, false
	}
	return typev1.Reason(n), true
}

// ReasonCode returns the gRPC code r is sent with, its grpc_code option;
// Unknown for a value without one (the edge's own codes, the interceptors'
// and the decline reasons, which no service sends with a fixed code).
func ReasonCode(r typev1.Reason) codes.Code {
	name, _ := proto.GetExtension(reasonOptions(r), typev1.E_GrpcCode).(string)
	c, ok := CodeByName(name)
	if !ok {
		return codes.Unknown
	}
	return c
}

// ReasonHTTPStatus returns r's http_status option: the REST edge's status
// for r when it is not the usual one of r's code, the status of an edge
// code without one, or 0.
func ReasonHTTPStatus(r typev1.Reason) int {
	s, _ := proto.GetExtension(reasonOptions(r), typev1.E_HttpStatus).(int32)
	return int(s)
}

// ReasonDoc returns r's doc option: what r means to a client, what to do
// and whether to retry; "" for a Reason that is not a problem code.
func ReasonDoc(r typev1.Reason) string {
	s, _ := proto.GetExtension(reasonOptions(r), typev1.E_Doc).(string)
	return s
}

// ReasonTitle returns r's title option: the title of the edge's own
// problems with code r; "" for a Reason that is not one of the edge's own
// codes.
func ReasonTitle(r typev1.Reason) string {
	s, _ := proto.GetExtension(reasonOptions(r), typev1.E_Title).(string)
	return s
}

// reasonOptions returns r's options; none for a number outside the enum.
func reasonOptions(r typev1.Reason) proto.Message {
	v := r.Descriptor().Values().ByNumber(r.Number())
	if v == nil {
		return &descriptorpb.EnumValueOptions{}
	}
	return v.Options()
}

// Fail returns r as domain's error: r's code, msg, and an ErrorInfo with
// domain, r's reason and metadata pairs (key, value, ...), as New does.
func Fail(domain string, r typev1.Reason, msg string, metadata ...string) error {
	return New(ReasonCode(r), domain, ReasonName(r), msg, metadata...)
}
