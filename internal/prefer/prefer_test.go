package prefer

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  Preferences
		err   error
	}{
		{"none", nil, nil, nil},
		{"empty line", []string{""}, nil, nil},
		{"respond-async", []string{"respond-async"}, Preferences{{Name: "respond-async"}}, nil},
		{"case-insensitive", []string{"Respond-Async"}, Preferences{{Name: "respond-async"}}, nil},
		{"list", []string{"return=minimal, respond-async"},
			Preferences{{Name: "return", Value: "minimal"}, {Name: "respond-async"}}, nil},
		{"two lines", []string{"wait=10", "respond-async"},
			Preferences{{Name: "wait", Value: "10"}, {Name: "respond-async"}}, nil},
		{"empty elements", []string{" , respond-async ,,"}, Preferences{{Name: "respond-async"}}, nil},
		{"first counts", []string{"wait=10, wait=20"}, Preferences{{Name: "wait", Value: "10"}}, nil},
		{"params", []string{`foo; bar="a;b,c" ;; baz = 1`},
			Preferences{{Name: "foo", Params: []Param{{"bar", "a;b,c"}, {"baz", "1"}}}}, nil},
		{"quoted value", []string{`x="a\"b"`}, Preferences{{Name: "x", Value: `a"b`}}, nil},
		{"BWS around =", []string{"wait = 5"}, Preferences{{Name: "wait", Value: "5"}}, nil},
		{"unknown kept", []string{"handling=lenient"}, Preferences{{Name: "handling", Value: "lenient"}}, nil},
		{"quoted name", []string{`"respond-async"`}, nil, ErrMalformed},
		{"unclosed quote", []string{`x="abc`}, nil, ErrMalformed},
		{"space in token", []string{"respond async"}, nil, ErrMalformed},
		{"empty name with params", []string{";a=b"}, nil, ErrMalformed},
		{"empty value", []string{"x="}, nil, ErrMalformed},
		{"control byte", []string{"x=\"a\x01\""}, nil, ErrMalformed},
		{"non-ASCII", []string{"résumé"}, nil, ErrMalformed},
		{"too many", []string{strings.Repeat("a,", MaxPreferences)}, nil, ErrTooLong},
		{"too long", []string{strings.Repeat("a", MaxBytes+1)}, nil, ErrTooLong},
		{"too long over lines", []string{strings.Repeat("a", MaxBytes/2+1), strings.Repeat("b", MaxBytes/2)}, nil, ErrTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.lines)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Parse(%q) error = %v, want %v", tt.lines, err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.lines, diff)
			}
		})
	}
}

func TestHas(t *testing.T) {
	ps, err := Parse([]string{"wait=1, respond-async"})
	if err != nil {
		t.Fatal(err)
	}
	if !ps.Has(RespondAsync) || ps.Has("return") {
		t.Errorf("Has on %v: respond-async %v, return %v; want true, false", ps, ps.Has(RespondAsync), ps.Has("return"))
	}
}

// TestFlag: a preference defined without a value (respond-async, RFC
// 7240 section 4.1) counts only as sent bare; "=value" sends something
// else (an empty quoted value is no value, section 2), and of a repeated
// preference the first counts.
func TestFlag(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  bool
	}{
		{"bare", []string{"respond-async"}, true},
		{"any case", []string{"RESPOND-ASYNC"}, true},
		{"with params", []string{"respond-async; x=1"}, true},
		{"in a list", []string{"wait=5, respond-async"}, true},
		{"on a second line", []string{"wait=5", "respond-async"}, true},
		{"empty quoted value", []string{`respond-async=""`}, true},
		{"absent", []string{"wait=5"}, false},
		{"none", nil, false},
		{"false", []string{"respond-async=false"}, false},
		{"true", []string{"respond-async=true"}, false},
		{"quoted value", []string{`respond-async="1"`}, false},
		{"valued first", []string{"respond-async=false, respond-async"}, false},
		{"valued first over lines", []string{"respond-async=0", "respond-async"}, false},
		{"bare first", []string{"respond-async, respond-async=false"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := Parse(tt.lines)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.lines, err)
			}
			if got := ps.Flag(RespondAsync); got != tt.want {
				t.Errorf("Parse(%q).Flag(respond-async) = %v, want %v", tt.lines, got, tt.want)
			}
		})
	}
}

// FuzzParse: Parse never panics, stays within its bounds, and every name
// it returns is a lower-case token.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"respond-async", `a; b="c,d"`, ",,", `x="\`, "wait = 10, respond-async;p"} {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ps, err := Parse([]string{a, b})
		if err != nil {
			return
		}
		if len(ps) > MaxPreferences {
			t.Fatalf("Parse gave %d preferences", len(ps))
		}
		for _, p := range ps {
			if !isToken(p.Name) || p.Name != strings.ToLower(p.Name) {
				t.Fatalf("Parse gave name %q", p.Name)
			}
		}
	})
}
