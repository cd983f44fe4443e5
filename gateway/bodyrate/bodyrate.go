package bodyrate

import (
	"errors"
	"io"
	"os"
	"time"
)

// ErrTooSlow is Read's error when the body did not arrive within the
// Rule's deadline.
var ErrTooSlow = errors.New("bodyrate: request body too slow")

// chunk is how much Read asks for at once: small enough that the deadline
// moves on as a slow body arrives, large enough that a fast one takes few
// reads.
const chunk = 32 << 10

// Rule is a body's deadline and minimum rate.
type Rule struct {
	// Timeout bounds the whole body, from the start of Read. Zero or
	// negative means no bound of its own.
	Timeout time.Duration
	// MinRate is the average rate, in bytes a second, a body must keep up
	// after Grace. Zero or negative means no minimum rate.
	MinRate int64
	// Grace is how long the body may take to begin (and the slack of a
	// body that keeps up MinRate). Used only with MinRate.
	Grace time.Duration
}

// Deadline returns the read deadline after n bytes of a body that began
// at start; the zero Time when the Rule bounds nothing.
func (r Rule) Deadline(start time.Time, n int64) time.Time {
	var d time.Duration
	if r.MinRate > 0 {
		d = r.Grace + allowance(n, r.MinRate)
	}
	if r.Timeout > 0 && (d == 0 || d > r.Timeout) {
		d = r.Timeout
	}
	if d == 0 {
		return time.Time{}
	}
	return start.Add(d)
}

// allowance is the time n bytes earn at rate bytes a second, saturating
// rather than overflowing.
func allowance(n, rate int64) time.Duration {
	secs := n / rate
	if secs >= int64(1<<62)/int64(time.Second) {
		return 1 << 62
	}
	return time.Duration(secs)*time.Second + time.Duration(n%rate)*time.Second/time.Duration(rate)
}

// Read reads body until EOF or until more than limit bytes arrived,
// setting the read deadline with setDeadline before every read, and
// returns what it read and whether that is the whole body (EOF seen, at
// most limit bytes). A read cut by the deadline is ErrTooSlow; another
// read error is returned as it is. setDeadline may fail (a writer that
// supports no deadline): the body is then read without one.
func Read(body io.Reader, limit int64, r Rule, setDeadline func(time.Time) error) (data []byte, whole bool, err error) {
	start := time.Now()
	buf := make([]byte, 0, min(limit+1, chunk))
	for int64(len(buf)) <= limit {
		_ = setDeadline(r.Deadline(start, int64(len(buf))))
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow
		}
		room := min(int64(cap(buf)-len(buf)), limit+1-int64(len(buf)))
		n, rerr := body.Read(buf[len(buf) : len(buf)+int(room)])
		buf = buf[:len(buf)+n]
		switch {
		case rerr == io.EOF:
			return buf, int64(len(buf)) <= limit, nil
		case errors.Is(rerr, os.ErrDeadlineExceeded):
			return buf, false, ErrTooSlow
		case rerr != nil:
			return buf, false, rerr
		}
	}
	return buf, false, nil
}
