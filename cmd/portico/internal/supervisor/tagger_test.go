package supervisor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// tag writes in through a tagger in chunks of size n and returns the
// records it made.
func tag(t testing.TB, in string, n int) []string {
	t.Helper()
	var out bytes.Buffer
	tg := newTagger("svc", 0, &lockedWriter{w: &out})
	for b := []byte(in); len(b) > 0; {
		k := min(n, len(b))
		if _, err := tg.Write(b[:k]); err != nil {
			t.Fatal(err)
		}
		b = b[k:]
	}
	tg.Flush()
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

func TestTagger(t *testing.T) {
	rec := `{"time":"t","level":"WARN","msg":"m","service":"x"}`
	tests := []struct {
		name string
		in   string
		want []string // each record's msg
	}{
		{"record passes through", rec + "\n", []string{"m"}},
		{"plain line", "hello\r\n", []string{"hello"}},
		{"blank lines dropped", "\n\r\nhello\n\n", []string{"hello"}},
		{"no trailing newline", "a\nb", []string{"a", "b"}},
		{"json without msg", `{"level":"WARN","k":1}` + "\n", []string{"(no msg)"}},
		{"json array is text", `[1,2]` + "\n", []string{"[1,2]"}},
		{"broken json is text", `{"msg":` + "\n", []string{`{"msg":`}},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 7, 1 << 20} {
			t.Run(tt.name, func(t *testing.T) {
				got := tag(t, tt.in, chunk)
				if len(got) != len(tt.want) {
					t.Fatalf("tag(%q) = %q, want %d records", tt.in, got, len(tt.want))
				}
				for i, line := range got {
					var m map[string]any
					if err := json.Unmarshal([]byte(line), &m); err != nil {
						t.Fatalf("record %q is not JSON: %v", line, err)
					}
					if m["msg"] != tt.want[i] {
						t.Errorf("record %d msg = %v, want %q", i, m["msg"], tt.want[i])
					}
				}
			})
		}
	}
	if got := tag(t, rec+"\n", 3); got[0] != rec {
		t.Errorf("tag(%q) = %q, want it unchanged", rec, got[0])
	}
	if got := tag(t, `{"level":"WARN","k":1}`+"\n", 3); !strings.Contains(got[0], `"level":"WARN","msg":"(no msg)","service":"svc","k":1}`) {
		t.Errorf("a JSON line without time or msg = %q, want its own level and fields kept", got[0])
	}
}

// FuzzTagger: whatever a child writes, in whatever chunks, every line out is
// one JSON object with time, level, msg and service, none longer than
// maxLine plus the fields the tagger adds.
func FuzzTagger(f *testing.F) {
	f.Add([]byte(`{"time":"t","level":"INFO","msg":"m"}`+"\nplain\n"), 3)
	f.Add([]byte(`{"time":"t","level":"INFO","msg":"`+strings.Repeat("é", maxLine)+`"}`), 1000)
	f.Add([]byte("\xff\xfe\r\n{\"a\":{\"b\":[1,"), 1)
	f.Fuzz(func(t *testing.T, in []byte, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		for _, line := range tag(t, string(in), chunk) {
			if line == "" {
				continue // nothing was written
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("record %.200q is not JSON: %v", line, err)
			}
			for _, k := range []string{"time", "level", "msg"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("record %.200q has no %s", line, k)
				}
			}
			if len(line) > 6*maxLine+256 { // 6: the longest escape of one byte, \u0000
				t.Fatalf("record of %d bytes", len(line))
			}
		}
	})
}
