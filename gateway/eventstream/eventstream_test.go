package eventstream

import (
	"strings"
	"testing"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name   string
		accept []string
		want   Framing
		wantOK bool
	}{
		{"none", nil, NDJSON, true},
		{"empty", []string{""}, NDJSON, true},
		{"ndjson", []string{"application/x-ndjson"}, NDJSON, true},
		{"sse", []string{"text/event-stream"}, SSE, true},
		{"sse any case", []string{"Text/Event-Stream"}, SSE, true},
		{"any", []string{"*/*"}, NDJSON, true},
		{"browser fetch", []string{"application/json, text/plain, */*"}, NDJSON, true},
		{"text range", []string{"text/*"}, SSE, true},
		{"sse preferred by q", []string{"application/x-ndjson;q=0.5, text/event-stream"}, SSE, true},
		{"ndjson preferred by q", []string{"application/x-ndjson, text/event-stream;q=0.9"}, NDJSON, true},
		{"tie is ndjson", []string{"text/event-stream, application/x-ndjson"}, NDJSON, true},
		{"specific beats range", []string{"text/event-stream;q=0, */*"}, NDJSON, true},
		{"two headers", []string{"text/html", "text/event-stream"}, SSE, true},
		{"json only", []string{"application/json"}, NDJSON, false},
		{"html only", []string{"text/html"}, NDJSON, false},
		{"refused", []string{"application/x-ndjson;q=0, text/event-stream;q=0"}, NDJSON, false},
		{"malformed only", []string{"garbage"}, NDJSON, true},
		{"bad q skipped", []string{"text/event-stream;q=2, text/html"}, NDJSON, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Negotiate(tt.accept)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Negotiate(%q) = %v, %v; want %v, %v", tt.accept, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestFrames(t *testing.T) {
	msg, prob := []byte(`{"id":"o1"}`), []byte(`{"status":502}`)
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"ndjson message", NDJSON.AppendMessage(nil, msg), "{\"result\":{\"id\":\"o1\"}}\n"},
		{"ndjson error", NDJSON.AppendError(nil, prob), "{\"error\":{\"status\":502}}\n"},
		{"ndjson end", NDJSON.AppendEnd(nil), ""},
		{"ndjson heartbeat", NDJSON.AppendHeartbeat(nil), ""},
		{"sse message", SSE.AppendMessage(nil, msg), "data: {\"id\":\"o1\"}\n\n"},
		{"sse error", SSE.AppendError(nil, prob), "event: error\ndata: {\"status\":502}\n\n"},
		{"sse end", SSE.AppendEnd(nil), "event: end\ndata: {}\n\n"},
		{"sse heartbeat", SSE.AppendHeartbeat(nil), ": keep-alive\n\n"},
		{"sse newline in data", SSE.AppendMessage(nil, []byte("a\r\nb")), "data: a\ndata: b\n\n"},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "*/*", "text/event-stream;q=0.5, application/x-ndjson", "a/b;q=x", ";;,,", "*/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		fr, ok := Negotiate([]string{accept})
		if fr != NDJSON && fr != SSE {
			t.Fatalf("Negotiate(%q) = %v", accept, fr)
		}
		if !ok && strings.TrimSpace(accept) == "" {
			t.Fatalf("Negotiate(%q) refused an empty Accept", accept)
		}
		if !ok && fr != NDJSON {
			t.Fatalf("Negotiate(%q) refused with %v", accept, fr)
		}
	})
}
