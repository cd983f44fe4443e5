package stale

import (
	"net/http"
	"testing"
	"time"
)

func TestParseAccept(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  Accept
	}{
		{"none", nil, Accept{}},
		{"no-cache", []string{"no-cache"}, Accept{Refused: true}},
		{"case and spaces", []string{" No-Cache , max-age=0"}, Accept{Refused: true}},
		{"max-stale=0", []string{"max-stale=0"}, Accept{Refused: true}},
		{"max-stale bad", []string{"max-stale=soon"}, Accept{Refused: true}},
		{"max-stale negative", []string{"max-stale=-1"}, Accept{Refused: true}},
		{"max-stale any", []string{"max-stale"}, Accept{}},
		{"max-stale seconds", []string{"max-stale=30"}, Accept{MaxStale: 30 * time.Second}},
		{"max-stale quoted", []string{`max-stale="30"`}, Accept{MaxStale: 30 * time.Second}},
		{"max-stale huge", []string{"max-stale=99999999999999999999"}, Accept{MaxStale: (1 << 31) * time.Second}},
		{"smallest wins", []string{"max-stale=60", "max-stale=10"}, Accept{MaxStale: 10 * time.Second}},
		{"no-store", []string{"no-store"}, Accept{NoStore: true}},
		{"other directives", []string{"max-age=0, only-if-cached"}, Accept{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{"Cache-Control": tt.lines}
			if got := ParseAccept(h); got != tt.want {
				t.Errorf("ParseAccept(%q) = %+v, want %+v", tt.lines, got, tt.want)
			}
		})
	}
}

func TestAllows(t *testing.T) {
	tests := []struct {
		a    Accept
		age  time.Duration
		want bool
	}{
		{Accept{}, time.Hour, true},
		{Accept{Refused: true}, 0, false},
		{Accept{MaxStale: 10 * time.Second}, 10 * time.Second, true},
		{Accept{MaxStale: 10 * time.Second}, 11 * time.Second, false},
	}
	for _, tt := range tests {
		if got := tt.a.Allows(tt.age); got != tt.want {
			t.Errorf("%+v.Allows(%v) = %v, want %v", tt.a, tt.age, got, tt.want)
		}
	}
}

// FuzzParseAccept: any Cache-Control line parses without panic, and a
// line naming no-cache is always refused.
func FuzzParseAccept(f *testing.F) {
	for _, s := range []string{"no-cache", "max-stale=5", `max-stale="7"`, "a=b,c", ",,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		a := ParseAccept(http.Header{"Cache-Control": {line}})
		if a.MaxStale < 0 {
			t.Errorf("ParseAccept(%q).MaxStale = %v, want >= 0", line, a.MaxStale)
		}
		if line == "no-cache" && !a.Refused {
			t.Errorf("ParseAccept(%q) not refused", line)
		}
	})
}
