package apidoc

import (
	"regexp"
	"testing"

	"github.com/portico-gateway/portico/gateway/timeout"
)

func TestSummary(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"one sentence", "GetOrder returns one of the caller's orders.", "GetOrder returns one of the caller's orders."},
		{"two lines", "CancelOrder cancels an order: releases\nits stock. Cancelling twice is fine.", "CancelOrder cancels an order: releases its stock."},
		{"first paragraph", "Lists items\n\nMore.", "Lists items"},
		{"abbreviation-free dot", "Id is ord-1.2", "Id is ord-1.2"},
	} {
		if got := summary(tt.in); got != tt.want {
			t.Errorf("%s: summary = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := clean("a\n b\n\n c\n   table"); got != "a\nb\n\nc\n  table" {
		t.Errorf("clean = %q", got)
	}
	if got := lowerCamel("CreateOrder"); got != "createOrder" {
		t.Errorf("lowerCamel = %q", got)
	}
	if got := nameSummary("ListShipments"); got != "List shipments" {
		t.Errorf("nameSummary = %q", got)
	}
}

// TestGrpcTimeoutPattern: the documented pattern admits exactly what the
// edge's parser accepts.
func TestGrpcTimeoutPattern(t *testing.T) {
	re := regexp.MustCompile(GrpcTimeoutPattern)
	for _, in := range []string{
		"", "1", "H", "0H", "00000000H", "0m", "1H", "500m", "99999999H", "00000001n", "0000001n",
		"123456789S", "000000000S", "1h", "1s", "-1S", "+1S", "1.5S", " 1S", "1S ", "10x", "1 S", "07u", "100000000M",
	} {
		_, err := timeout.ParseTimeout(in)
		if re.MatchString(in) != (err == nil) {
			t.Errorf("%q: pattern matches %v, parser error %v", in, re.MatchString(in), err)
		}
	}
}

func FuzzGrpcTimeoutPattern(f *testing.F) {
	for _, s := range []string{"0H", "1S", "00000001n", "123456789S"} {
		f.Add(s)
	}
	re := regexp.MustCompile(GrpcTimeoutPattern)
	f.Fuzz(func(t *testing.T, in string) {
		_, err := timeout.ParseTimeout(in)
		if re.MatchString(in) != (err == nil) {
			t.Errorf("%q: pattern matches %v, parser error %v", in, re.MatchString(in), err)
		}
	})
}
