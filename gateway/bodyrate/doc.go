// Package bodyrate reads a request body under a deadline and a minimum
// rate, so that a client that sends its headers and then trickles (or
// withholds) the body cannot hold the edge for long (a slow-body attack).
//
// A Rule gives the body Grace to start, then extends the read deadline by
// one second for every MinRate bytes that arrive, never past Timeout from
// the start: after n bytes the deadline is
//
//	start + min(Timeout, Grace + n/MinRate)
//
// so a body must keep up an average of MinRate bytes a second (after the
// grace) and arrive whole within Timeout. Read sets the deadline before
// each read through a function the caller gives
// (http.ResponseController.SetReadDeadline at the edge: on HTTP/1 the
// connection's deadline, on HTTP/2 the stream's); a read cut by it is
// ErrTooSlow. Read starts no goroutine and keeps no state between calls.
package bodyrate
