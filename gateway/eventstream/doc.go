// Package eventstream frames a stream of JSON messages for HTTP clients,
// in one of two framings chosen by the request's Accept header:
//
//   - NDJSON (application/x-ndjson, the default): one line per message,
//     {"result": <message>}, as grpc-gateway streams; an error ends the
//     stream with one {"error": <problem>} line; a clean end is the stream
//     closing after its last result, with no error line.
//   - Server-Sent Events (text/event-stream): one event per message (the
//     default event type, data the message's JSON); an error is
//     "event: error" with the problem's JSON as data; a clean end is
//     "event: end". Heartbeats are SSE comments (": keep-alive"), which
//     every client ignores; NDJSON has none, as a blank line is no JSON.
//
// Negotiate picks the framing; the Append functions write frames into a
// caller's buffer, so a stream reuses one buffer for all its frames. The
// package holds no state and is safe for concurrent use.
package eventstream
