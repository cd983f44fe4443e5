package faults_test

import (
	"flag"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/portico-gateway/portico/interceptors/faults"
)

const createOrder = "/portico.order.v1.OrderService/CreateOrder"

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want faults.Rules
	}{
		{"", nil},
		{"delay=350ms,method=" + createOrder, faults.Rules{{Method: createOrder, Delay: 350 * time.Millisecond, Rate: 1}}},
		{"code=UNAVAILABLE,rate=0.5", faults.Rules{{Method: "*", Code: codes.Unavailable, Rate: 0.5}}},
		{" code = unavailable , delay = 1s ", faults.Rules{{Method: "*", Code: codes.Unavailable, Delay: time.Second, Rate: 1}}},
		{"delay=10ms;code=INTERNAL,method=" + createOrder, faults.Rules{
			{Method: "*", Delay: 10 * time.Millisecond, Rate: 1},
			{Method: createOrder, Code: codes.Internal, Rate: 1},
		}},
	}
	for _, tt := range tests {
		got, err := faults.Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q) error: %v", tt.in, err)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("Parse(%q) = %v, want %v", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("Parse(%q)[%d] = %+v, want %+v", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

func TestParseErrorsNameTheKey(t *testing.T) {
	tests := []struct{ in, mention string }{
		{"delay=soon", "delay"},
		{"delay=-1s", "delay"},
		{"code=TEAPOT", "code"},
		{"code=OK", "code"},
		{"rate=1.5,code=INTERNAL", "rate"},
		{"rate=NaN,code=INTERNAL", "rate"},
		{"method=CreateOrder,code=INTERNAL", "method"},
		{"colour=red", "colour"},
		{"delay", "key=value"},
		{"method=*", "delay or code"},
		{"delay=1s,delay=2s", "delay"},
	}
	for _, tt := range tests {
		_, err := faults.Parse(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("Parse(%q) = %v, want an error mentioning %q", tt.in, err, tt.mention)
		}
	}
}

func TestRulesIsAFlag(t *testing.T) {
	var rules faults.Rules
	fs := flag.NewFlagSet("order", flag.ContinueOnError)
	fs.Var(&rules, "faults", "fault injection rules")
	if err := fs.Parse([]string{"--faults", "delay=350ms,method=" + createOrder, "--faults", "code=UNAVAILABLE,rate=0.5"}); err != nil {
		t.Fatal(err)
	}
	want := "method=" + createOrder + ",delay=350ms,rate=1;method=*,code=UNAVAILABLE,rate=0.5"
	if got := rules.String(); got != want {
		t.Errorf("rules = %q, want %q", got, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"delay=350ms,method=" + createOrder,
		"code=UNAVAILABLE,rate=0.5",
		"delay=1s;code=internal",
		"rate=1e-3,code=DATA_LOSS,method=*",
		"method=/a=b/c,delay=1ns",
		",,;;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := faults.Parse(s)
		if err != nil {
			return
		}
		// What parses prints back to itself.
		again, err := faults.Parse(rules.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q fails: %v", s, rules.String(), err)
		}
		if len(again) != len(rules) {
			t.Fatalf("round trip of %q: %d rules, want %d", s, len(again), len(rules))
		}
		for i := range rules {
			if again[i] != rules[i] {
				t.Fatalf("round trip of %q: rule %d = %+v, want %+v", s, i, again[i], rules[i])
			}
			if r := rules[i]; r.Rate < 0 || r.Rate > 1 || r.Delay < 0 || (r.Delay == 0 && r.Code == codes.OK) {
				t.Fatalf("Parse(%q) accepted an invalid rule %+v", s, r)
			}
		}
	})
}
