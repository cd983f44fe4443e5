// Package shed caps the work an edge takes on at once, so that an overload
// is answered with fast refusals instead of a queue that makes every answer
// late (load shedding).
//
// A Limiter holds a fixed number of slots. Acquire takes one at once when one is
// free, the cheap path of every request: one atomic add, no lock, no
// allocation. When none is free, up to Queue callers may wait for one, each
// for at most the wait it passes (the caller bounds it by its own deadline)
// and never past its context; every other caller is refused at once.
// Nothing queues without bound, and no goroutine is started.
//
// Release gives back a slot taken by Acquire. A Limiter is safe for
// concurrent use; its zero value is not: build one with New.
//
// A Keyed counts slots per key (a client address, a caller) with a cap per
// key, so that no one key takes every slot of a Limiter; it never waits.
// Its zero value is ready to use.
package shed
