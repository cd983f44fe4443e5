package trend

// ring is a bounded FIFO: Append drops the oldest value when full.
type ring[T any] struct {
	buf   []T
	start int // index in buf of the oldest value
	max   int
}

func newRing[T any](max int) *ring[T] { return &ring[T]{max: max} }

// Len is the number of values held.
func (r *ring[T]) Len() int { return len(r.buf) }

// At returns the i-th oldest value, 0 <= i < Len.
func (r *ring[T]) At(i int) T { return r.buf[(r.start+i)%len(r.buf)] }

// Append adds v as the newest value.
func (r *ring[T]) Append(v T) {
	if len(r.buf) < r.max {
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
}
