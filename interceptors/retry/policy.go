package retry

import (
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/portico-gateway/portico/interceptors/reason"
)

// idempotency answers "does the proto say this method is safe to repeat?",
// once per method.
type idempotency struct {
	files *protoregistry.Files
	cache sync.Map // full method -> bool
}

func (c *idempotency) safe(fullMethod string) bool {
	if v, ok := c.cache.Load(fullMethod); ok {
		return v.(bool)
	}
	safe := c.lookup(fullMethod)
	c.cache.Store(fullMethod, safe)
	return safe
}

// lookup maps "/pkg.Service/Method" to the descriptor "pkg.Service.Method"
// and reads its idempotency_level.
func (c *idempotency) lookup(fullMethod string) bool {
	name := strings.Replace(strings.TrimPrefix(fullMethod, "/"), "/", ".", 1)
	d, err := c.files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return false
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	if !ok {
		return false
	}
	opts, ok := md.Options().(*descriptorpb.MethodOptions)
	if !ok {
		return false
	}
	switch opts.GetIdempotencyLevel() {
	case descriptorpb.MethodOptions_NO_SIDE_EFFECTS, descriptorpb.MethodOptions_IDEMPOTENT:
		return true
	}
	return false
}

// transient reports whether err may go away on another attempt, and the
// delay the server asked for (zero when it did not). attemptTimedOut is true
// when this package's per-attempt deadline fired while the caller still had
// time.
func transient(err error, attemptTimedOut bool) (pushback time.Duration, ok bool) {
	st, _ := status.FromError(err)
	switch st.Code() {
	case codes.Unavailable, codes.ResourceExhausted:
	case codes.DeadlineExceeded:
		return 0, attemptTimedOut
	default:
		return 0, false
	}
	var sawRetryInfo bool
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			// A local fast-fail (CIRCUIT_OPEN, OVERLOADED, budget), or an
			// UNAVAILABLE a live upstream answered on purpose (the order
			// service's INVENTORY_UNAVAILABLE): another attempt would get
			// the same answer after a wait the caller cannot afford.
			if d.GetDomain() == reason.Domain && reason.IsLocal(d.GetReason()) || reason.Deliberate(err) {
				return 0, false
			}
		case *errdetails.RetryInfo:
			sawRetryInfo = true
			pushback = d.GetRetryDelay().AsDuration()
		}
	}
	if st.Code() == codes.ResourceExhausted && !sawRetryInfo {
		return 0, false
	}
	return max(pushback, 0), true
}
