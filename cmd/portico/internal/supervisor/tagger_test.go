package supervisor

import (
	"bytes"
	"encoding/json"
	"slices"
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
	t.Run("cut at maxLine", testCutLines)
	if got := tag(t, `{"level":"WARN","k":1}`+"\n", 3); !strings.Contains(got[0], `"level":"WARN","msg":"(no msg)","service":"svc","k":1}`) {
		t.Errorf("a JSON line without time or msg = %q, want its own level and fields kept", got[0])
	}
}

// FuzzTagger: whatever a child writes, in whatever chunks, every line out is
// one JSON object with time, level, msg and service, none longer than
// maxLine plus the fields the tagger adds. And when in is a JSON object
// placed so that the cut at maxLine falls cut bytes into it, every member
// the record keeps has exactly the value it had before the cut: no cut
// number or literal survives.
func FuzzTagger(f *testing.F) {
	f.Add([]byte(`{"time":"t","level":"INFO","msg":"m"}`+"\nplain\n"), 3, uint16(0))
	f.Add([]byte(`{"time":"t","level":"INFO","msg":"`+strings.Repeat("é", maxLine)+`"}`), 1000, uint16(0))
	f.Add([]byte("\xff\xfe\r\n{\"a\":{\"b\":[1,"), 1, uint16(0))
	f.Add([]byte(`{"durationMs":123456,"ok":true}`), 7, uint16(15))
	f.Add([]byte(`{"n":null,"s":"abc","o":{"a":[1,2]},"f":-1.5e3}`), 1<<20, uint16(40))
	f.Fuzz(func(t *testing.T, in []byte, chunk int, cut uint16) {
		if chunk <= 0 {
			chunk = 1
		}
		for _, line := range tag(t, string(in), chunk) {
			checkRecord(t, line)
		}
		full, ok := placeCut(in, int(cut))
		if !ok {
			return
		}
		got := tag(t, string(full)+"\n", chunk)
		if len(got) != 1 {
			t.Fatalf("one cut line became %d records", len(got))
		}
		checkRecord(t, got[0])
		want := members(t, full)
		var rec map[string]json.RawMessage
		_ = json.Unmarshal([]byte(got[0]), &rec)
		for k, v := range rec {
			switch k {
			case "time", "level", "msg", "service", "pad", "truncatedBytes":
				continue
			}
			if !slices.Contains(want[k], compact(t, v)) {
				t.Fatalf("record kept %s=%s; the line had %s=%q", k, v, k, want[k])
			}
		}
	})
}

// checkRecord fails unless line is empty (nothing was written) or one JSON
// object with time, level and msg of bounded size.
func checkRecord(t *testing.T, line string) {
	t.Helper()
	if line == "" {
		return
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

// placeCut returns a valid JSON line whose members after a padding member
// are obj's, placed so that maxLine falls 1+cut%len(obj) bytes into them,
// or false if obj is not a one-line JSON object with members that fits.
func placeCut(obj []byte, cut int) ([]byte, bool) {
	if len(obj) < 3 || len(obj) > maxLine/2 || obj[0] != '{' || bytes.ContainsAny(obj, "\r\n") {
		return nil, false
	}
	head := `{"time":"t","level":"INFO","msg":"m","pad":"`
	k := 1 + cut%(len(obj)-1) // bytes of obj[1:] before the cut
	full := head + strings.Repeat("x", maxLine-len(head)-2-k) + `",` + string(obj[1:])
	if !json.Valid([]byte(full)) {
		return nil, false
	}
	return []byte(full), true
}

// members returns every value each key of the JSON object line has, compacted.
func members(t *testing.T, line []byte) map[string][]string {
	dec := json.NewDecoder(bytes.NewReader(line))
	_, _ = dec.Token()
	m := map[string][]string{}
	for dec.More() {
		tok, _ := dec.Token()
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("members of a valid line: %v", err)
		}
		k := tok.(string)
		m[k] = append(m[k], compact(t, v))
	}
	return m
}

func compact(t *testing.T, v []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		t.Fatalf("compact %q: %v", v, err)
	}
	return b.String()
}

// testCutLines: a JSON line cut at maxLine keeps only the members that are
// provably whole before the cut; a member whose value ends exactly at the cut
// (a number, a literal, or anything else) is dropped with the rest.
func testCutLines(t *testing.T) {
	head := `{"time":"t","level":"INFO","msg":"m","pad":"`
	pad := func(tail string) string { // tail begins exactly at maxLine-len(tail)
		return head + strings.Repeat("x", maxLine-len(head)-len(tail)-2) + `",` + tail
	}
	tests := []struct {
		name     string
		line     string // exactly maxLine bytes, then more
		rest     string
		wantKeys []string // keys after pad that survive
		wantNot  []string // keys that must be gone
	}{
		{"number cut at the end", pad(`"durationMs":12`), `3456}`, nil, []string{"durationMs"}},
		{"true cut at the end", pad(`"ok":true`), `,"b":1}`, nil, []string{"ok"}},
		{"null cut at the end", pad(`"v":null`), `}`, nil, []string{"v"}},
		{"string ending at the cut", pad(`"s":"abc"`), `}`, nil, []string{"s"}},
		{"object ending at the cut", pad(`"o":{"a":1}`), `}`, nil, []string{"o"}},
		{"number before a comma is whole", pad(`"n":12,"m":3`), `4}`, []string{"n"}, []string{"m"}},
		{"number before a space is whole", pad(`"n":12 `), `}`, []string{"n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.line) != maxLine {
				t.Fatalf("bad test: line is %d bytes, want %d", len(tt.line), maxLine)
			}
			for _, chunk := range []int{7, 1 << 20} {
				got := tag(t, tt.line+tt.rest+"\n", chunk)
				if len(got) != 1 {
					t.Fatalf("got %d records, want 1", len(got))
				}
				var m map[string]json.RawMessage
				if err := json.Unmarshal([]byte(got[0]), &m); err != nil {
					t.Fatalf("record is not JSON: %v", err)
				}
				if want := itoa(len(tt.rest)); string(m["truncatedBytes"]) != string(want) {
					t.Errorf("truncatedBytes = %s, want %s", m["truncatedBytes"], want)
				}
				for _, k := range append([]string{"time", "level", "msg", "pad"}, tt.wantKeys...) {
					if _, ok := m[k]; !ok {
						t.Errorf("record lost whole field %q", k)
					}
				}
				for _, k := range tt.wantNot {
					if v, ok := m[k]; ok {
						t.Errorf("record kept cut field %s=%s", k, v)
					}
				}
			}
		})
	}
}
