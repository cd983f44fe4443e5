// Package rpcerr builds and reads Portico's gRPC errors: a status code plus
// google.rpc details (ErrorInfo with a stable reason, BadRequest field
// violations, RetryInfo). Callers branch on status.Code and Reason, never on
// messages.
package rpcerr

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
)

// New returns a status error with code, message and an ErrorInfo naming
// domain and reason. metadata pairs (key, value, ...) go into ErrorInfo.
func New(c codes.Code, domain, reason, msg string, metadata ...string) error {
	info := &errdetails.ErrorInfo{Domain: domain, Reason: reason}
	if len(metadata) > 1 {
		info.Metadata = make(map[string]string, len(metadata)/2)
		for i := 0; i+1 < len(metadata); i += 2 {
			info.Metadata[metadata[i]] = metadata[i+1]
		}
	}
	return withDetails(status.New(c, msg), info)
}

// Violation is one bad field of a request. Field is the proto field path,
// e.g. "lines[0].quantity".
type Violation struct {
	Field       string
	Description string
}

// Violations collects field violations while a request is validated.
type Violations []Violation

// Add records a bad field.
func (v *Violations) Add(field, description string) {
	*v = append(*v, Violation{Field: field, Description: description})
}

// Has reports whether v names field, so a later check can skip a field
// whose rules it already broke.
func (v Violations) Has(field string) bool {
	return slices.ContainsFunc(v, func(x Violation) bool { return x.Field == field })
}

// Err returns INVALID_ARGUMENT with a BadRequest detail listing every
// violation, or nil when there are none.
func (v Violations) Err() error {
	if len(v) == 0 {
		return nil
	}
	br := &errdetails.BadRequest{}
	for _, f := range v {
		br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
			Field: f.Field, Description: f.Description,
		})
	}
	msg := "invalid " + v[0].Field + ": " + v[0].Description
	return withDetails(status.New(codes.InvalidArgument, msg), br)
}

// WithRetryInfo returns err with a RetryInfo detail asking the caller to wait
// delay before retrying. err must be a status error.
func WithRetryInfo(err error, delay time.Duration) error {
	st, _ := status.FromError(err)
	return withDetails(st, &errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
}

// Reason returns the ErrorInfo reason of err, or "".
func Reason(err error) string {
	if info := ErrorInfo(err); info != nil {
		return info.GetReason()
	}
	return ""
}

// ErrorInfo returns the first ErrorInfo detail of err, or nil.
func ErrorInfo(err error) *errdetails.ErrorInfo {
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) {
		return nil
	}
	for _, d := range se.GRPCStatus().Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

func withDetails(st *status.Status, details ...protoadapt.MessageV1) error {
	if d, err := st.WithDetails(details...); err == nil {
		st = d
	}
	return st.Err()
}

// CodeName returns c's canonical UPPER_SNAKE name (google/rpc/code.proto),
// or "CODE_<n>" for a code outside the standard seventeen. codes.Code.String
// gives Go's CamelCase instead.
func CodeName(c codes.Code) string {
	if n, ok := code.Code_name[int32(c)]; ok {
		return n
	}
	return "CODE_" + strconv.Itoa(int(c))
}

// CodeByName returns the code with canonical name name, in any case.
func CodeByName(name string) (codes.Code, bool) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if strings.EqualFold(CodeName(c), name) {
			return c, true
		}
	}
	return 0, false
}
