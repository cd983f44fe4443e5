package timeout

import (
	"errors"
	"time"
)

// ErrMalformed: a Grpc-Timeout value outside the wire format.
var ErrMalformed = errors.New("deadline: malformed Grpc-Timeout: want 1-8 digits and a unit of H, M, S, m, u or n, e.g. 500m")

// ErrZero: a Grpc-Timeout of zero ("0S", "000m"), which has the wire
// format's shape but no time in it. It is also ErrMalformed (errors.Is),
// so callers that only check for a bad header need not know it; a caller
// that explains the refusal can say what was wrong.
var ErrZero error = zeroError{}

type zeroError struct{}

func (zeroError) Error() string        { return "deadline: Grpc-Timeout is zero: want a positive timeout" }
func (zeroError) Is(target error) bool { return target == ErrMalformed }

// maxDigits is the gRPC wire format's limit on the value's digits.
const maxDigits = 8

// ParseTimeout parses a Grpc-Timeout header value.
func ParseTimeout(v string) (time.Duration, error) {
	if len(v) < 2 || len(v) > maxDigits+1 {
		return 0, ErrMalformed
	}
	unit, ok := units[v[len(v)-1]]
	if !ok {
		return 0, ErrMalformed
	}
	var n int64
	for i := 0; i < len(v)-1; i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, ErrMalformed
		}
		n = n*10 + int64(c-'0')
	}
	if n == 0 {
		return 0, ErrZero
	}
	// 99999999H overflows time.Duration; anything that long is "forever"
	// and gets clamped by Choose anyway.
	if n > int64(maxDuration/unit) {
		return maxDuration, nil
	}
	return time.Duration(n) * unit, nil
}

const maxDuration = time.Duration(1<<63 - 1)

var units = map[byte]time.Duration{
	'H': time.Hour,
	'M': time.Minute,
	'S': time.Second,
	'm': time.Millisecond,
	'u': time.Microsecond,
	'n': time.Nanosecond,
}

// Choose returns how long to wait for one request: def when header is
// empty, else the parsed header clamped to max. clamped reports that the
// client asked for more than max.
func Choose(header string, def, max time.Duration) (d time.Duration, clamped bool, err error) {
	if header == "" {
		return min(def, max), false, nil
	}
	d, err = ParseTimeout(header)
	if err != nil {
		return 0, false, err
	}
	if d > max {
		return max, true, nil
	}
	return d, false, nil
}
