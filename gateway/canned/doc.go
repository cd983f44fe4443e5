// Package canned recognises the plain-text answers net/http writes on an
// HTTP/1.x connection itself, before any handler runs, and lets the edge
// answer in their place.
//
// When http.Server cannot read a request (a malformed request line or
// header, no Host, a bad Content-Length, a Transfer-Encoding other than
// chunked, an HTTP version other than 1.x, headers past MaxHeaderBytes),
// its connection loop writes a canned answer straight to the net.Conn
// (net/http server.go, conn.serve) and closes the connection:
//
//	HTTP/1.1 <status line>\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n<body>
//
// with one fmt.Fprintf, so one Write call. Its empty 417 to an Expect other
// than 100-continue goes through its response writer but without a
// handler, as one write too, and is recognised by its exact form as well. Conn wraps a connection and
// checks each Write against exactly those forms (Parse): the whole write
// must be one, its body the one net/http pairs with its status line. A
// match is replaced by what the Rewrite hook returns; anything else goes
// through untouched. No answer a handler writes can match: net/http adds
// a Date header (or a Content-Length) to every handler's answer, and the
// edge adds X-Trace-Id.
//
// The check costs a length comparison for every write over MaxLen bytes
// (bodies, most answers) and a prefix comparison for the rest; it does not
// allocate.
//
// Only cleartext connections can be wrapped: on TLS the canned bytes reach
// the *tls.Conn, which net/http needs unwrapped (its handshake, ALPN h2),
// and below it they are ciphertext. HTTP/2 never writes these answers: a
// malformed HTTP/2 request is a stream or connection error.
//
// A Conn is used as net.Conn is: Write from one goroutine at a time.
package canned
