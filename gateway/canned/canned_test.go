package canned

import (
	"bytes"
	"net"
	"testing"
)

func TestParse(t *testing.T) {
	const hd = headers
	for _, tc := range []struct {
		name, in string
		want     Answer
		ok       bool
	}{
		{"400", "HTTP/1.1 400 Bad Request" + hd + "400 Bad Request", Answer{400, "", false}, true},
		{"400 with text", "HTTP/1.1 400 Bad Request: missing required Host header" + hd + "400 Bad Request: missing required Host header", Answer{400, "missing required Host header", false}, true},
		{"431", "HTTP/1.1 431 Request Header Fields Too Large" + hd + "431 Request Header Fields Too Large", Answer{431, "", false}, true},
		{"501", "HTTP/1.1 501 Not Implemented" + hd + "Unsupported transfer encoding", Answer{501, teBody, false}, true},
		{"505", "HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version" + hd + "505 HTTP Version Not Supported: unsupported protocol version", Answer{505, "unsupported protocol version", false}, true},
		{"417", "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Wed, 02 Dec 2026 17:55:06 GMT\r\nContent-Length: 0\r\n\r\n", Answer{417, expectText, false}, true},
		{"417 to HEAD", "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Wed, 02 Dec 2026 17:55:06 GMT\r\n\r\n", Answer{417, expectText, true}, true},
		{"417 to HTTP/1.0", "HTTP/1.0 417 Expectation Failed\r\nConnection: close\r\nDate: Wed, 02 Dec 2026 17:55:06 GMT\r\nContent-Length: 0\r\n\r\n", Answer{417, expectText, false}, true},
		{"417 with more headers", "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Wed, 02 Dec 2026 17:55:06 GMT\r\nX-Trace-Id: a\r\n\r\n", Answer{}, false},
		{"body differs", "HTTP/1.1 400 Bad Request" + hd + "something else", Answer{}, false},
		{"more after the body", "HTTP/1.1 400 Bad Request" + hd + "400 Bad RequestX", Answer{}, false},
		{"a handler's answer", "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Wed, 02 Dec 2026 18:00:00 GMT\r\nConnection: close\r\n\r\n400 Bad Request", Answer{}, false},
		{"2xx", "HTTP/1.1 200 OK" + hd + "200 OK", Answer{}, false},
		{"HTTP/1.0", "HTTP/1.0 400 Bad Request" + hd + "400 Bad Request", Answer{}, false},
		{"no status", "HTTP/1.1 " + hd, Answer{}, false},
		{"empty", "", Answer{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Parse([]byte(tc.in))
			if ok != tc.ok || got != tc.want {
				t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestConnRewrites: a canned write is replaced, anything else passes.
func TestConnRewrites(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &Conn{Conn: a, Rewrite: func(a Answer) []byte { return []byte("REWRITTEN") }}
	read := func() string {
		buf := make([]byte, 512)
		n, _ := b.Read(buf)
		return string(buf[:n])
	}
	for _, tc := range []struct{ in, want string }{
		{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
		{"HTTP/1.1 400 Bad Request" + headers + "400 Bad Request", "REWRITTEN"},
	} {
		done := make(chan string)
		go func() { done <- read() }()
		n, err := c.Write([]byte(tc.in))
		if got := <-done; got != tc.want || n != len(tc.in) || err != nil {
			t.Errorf("Write(%q) = %d, %v and sent %q; want %d, nil and %q", tc.in, n, err, got, len(tc.in), tc.want)
		}
	}
}

// FuzzParse: Parse never panics, and accepts only what net/http writes.
func FuzzParse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 400 Bad Request" + headers + "400 Bad Request"))
	f.Add([]byte("HTTP/1.1 501 Not Implemented" + headers + teBody))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := Parse(b)
		if !ok {
			return
		}
		if a.Status < 400 || a.Status > 599 || !bytes.HasPrefix(b, []byte("HTTP/1.")) || !bytes.Contains(b, []byte("Connection: close\r\n")) {
			t.Errorf("Parse(%q) = %+v, true", b, a)
		}
	})
}

// BenchmarkWrite is the cost of a Conn's check on an ordinary answer
// (small, so it is checked), against the bare connection.
func BenchmarkWrite(b *testing.B) {
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Wed, 02 Dec 2026 18:00:00 GMT\r\nX-Trace-Id: 4bf92f3577b34da6a3ce929d0e0e4736\r\nContent-Length: 2\r\n\r\n{}")
	for _, tc := range []struct {
		name string
		c    net.Conn
	}{{"bare", discard{}}, {"wrapped", &Conn{Conn: discard{}, Rewrite: func(Answer) []byte { return nil }}}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = tc.c.Write(answer)
			}
		})
	}
}

// discard is a net.Conn whose writes go nowhere.
type discard struct{ net.Conn }

func (discard) Write(b []byte) (int, error) { return len(b), nil }
