package etag

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	many := strings.Repeat(`"a",`, MaxTags) + `"b"`
	tests := []struct {
		name   string
		values []string
		want   Condition
		err    error
	}{
		{"absent", nil, Condition{}, nil},
		{"one strong", []string{`"abc"`}, Condition{Present: true, Tags: []Tag{Strong("abc")}}, nil},
		{"one weak", []string{`W/"abc"`}, Condition{Present: true, Tags: []Tag{Weak("abc")}}, nil},
		{"empty opaque", []string{`""`}, Condition{Present: true, Tags: []Tag{Strong("")}}, nil},
		{"star", []string{`*`}, Condition{Present: true, Any: true}, nil},
		{"star spaced", []string{` * `}, Condition{Present: true, Any: true}, nil},
		{"list", []string{`"a", W/"b" ,"c"`}, Condition{Present: true, Tags: []Tag{Strong("a"), Weak("b"), Strong("c")}}, nil},
		{"two lines", []string{`"a"`, `"b"`}, Condition{Present: true, Tags: []Tag{Strong("a"), Strong("b")}}, nil},
		{"empty members", []string{`, "a",, ,"b",`}, Condition{Present: true, Tags: []Tag{Strong("a"), Strong("b")}}, nil},
		{"obs-text", []string{"\"\xe9t\xe9\""}, Condition{Present: true, Tags: []Tag{Strong("\xe9t\xe9")}}, nil},
		{"unquoted", []string{`abc`}, Condition{}, ErrMalformed},
		{"lower w", []string{`w/"abc"`}, Condition{}, ErrMalformed},
		{"unterminated", []string{`"abc`}, Condition{}, ErrMalformed},
		{"no comma", []string{`"a" "b"`}, Condition{}, ErrMalformed},
		{"space inside", []string{`"a b"`}, Condition{}, ErrMalformed},
		{"control inside", []string{"\"a\x01\""}, Condition{}, ErrMalformed},
		{"star and tag", []string{`*, "a"`}, Condition{}, ErrMalformed},
		{"tag and star", []string{`"a"`, `*`}, Condition{}, ErrMalformed},
		{"two stars", []string{`*,*`}, Condition{}, ErrMalformed},
		{"blank", []string{``}, Condition{}, ErrMalformed},
		{"only commas", []string{` , `}, Condition{}, ErrMalformed},
		{"weak star", []string{`W/*`}, Condition{}, ErrMalformed},
		{"too many", []string{many}, Condition{}, ErrTooMany},
		{"too long", []string{`"` + strings.Repeat("a", MaxBytes) + `"`}, Condition{}, ErrTooLong},
		{"too long in all", []string{strings.Repeat("a", MaxBytes/2), strings.Repeat("a", MaxBytes/2+1)}, Condition{}, ErrTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.values)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Parse(%q) error = %v, want %v", tt.values, err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.values, diff)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	cur := Strong("v1")
	tests := []struct {
		name                 string
		header               string
		exists               bool
		wantStrong, wantWeak bool
	}{
		{"same strong", `"v1"`, true, true, true},
		{"other", `"v2"`, true, false, false},
		{"weak of same", `W/"v1"`, true, false, true},
		{"in list", `"v0", "v1"`, true, true, true},
		{"weak in list", `"v0", W/"v1"`, true, false, true},
		{"star", `*`, true, true, true},
		{"star, nothing there", `*`, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]string{tt.header})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.MatchStrong(cur, tt.exists); got != tt.wantStrong {
				t.Errorf("MatchStrong(%s) of %s = %v, want %v", cur, tt.header, got, tt.wantStrong)
			}
			if got := c.MatchWeak(cur, tt.exists); got != tt.wantWeak {
				t.Errorf("MatchWeak(%s) of %s = %v, want %v", cur, tt.header, got, tt.wantWeak)
			}
		})
	}
	// A weak current tag never matches strongly, even itself.
	if Weak("v1").StrongMatch(Weak("v1")) {
		t.Error(`W/"v1" StrongMatch W/"v1" = true, want false`)
	}
}

func TestTagString(t *testing.T) {
	for _, tt := range []struct {
		tag  Tag
		want string
	}{{Strong("x"), `"x"`}, {Weak("x"), `W/"x"`}} {
		if got := tt.tag.String(); got != tt.want {
			t.Errorf("%#v.String() = %s, want %s", tt.tag, got, tt.want)
		}
	}
}

// FuzzParse: Parse never panics, stays within its bounds, and what it
// accepts prints back to a list it parses the same way.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`"a"`, `W/"a", "b"`, `*`, ` , "x",`, `"a" "b"`, `W/`, `"`, "\"\xff\"", `*, *`} {
		f.Add(s, "")
	}
	f.Add(`"a"`, `W/"b"`)
	f.Fuzz(func(t *testing.T, a, b string) {
		values := []string{a}
		if b != "" {
			values = append(values, b)
		}
		c, err := Parse(values)
		if err != nil {
			return
		}
		if !c.Present || len(c.Tags) > MaxTags || c.Any && len(c.Tags) > 0 || !c.Any && len(c.Tags) == 0 {
			t.Fatalf("Parse(%q) = %+v: out of shape", values, c)
		}
		parts := make([]string, len(c.Tags))
		for i, tag := range c.Tags {
			parts[i] = tag.String()
		}
		line := strings.Join(parts, ",") // never longer than what was parsed
		if c.Any {
			line = "*"
		}
		again, err := Parse([]string{line})
		if err != nil || !cmp.Equal(again, c) {
			t.Fatalf("Parse(%q) = %+v, but its print %q parses as %+v, %v", values, c, line, again, err)
		}
	})
}
