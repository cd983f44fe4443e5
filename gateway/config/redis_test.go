package config

import (
	"strings"
	"testing"
)

// TestRedisURL: check-config (Parse) refuses every redis.url the edge would
// refuse at start or reload (go-redis's ParseURL), without echoing its
// password, and takes the ones it would use.
func TestRedisURL(t *testing.T) {
	for _, tt := range []struct {
		url, want string // want: "" accepted, else a word of the error
	}{
		{"redis://127.0.0.1:6379/0", ""},
		{"rediss://user:pw@cache.internal:6380/2?dial_timeout=3s", ""},
		{"http://127.0.0.1:6379", "want redis://"},
		{"redis://user:s3cretpw@127.0.0.1:6399/0?password=qsecret", "unexpected option"},
		{"redis://127.0.0.1:6379/x", "invalid database"},
	} {
		t.Run(tt.url, func(t *testing.T) {
			_, err := Parse([]byte("upstreams:\n  - name: inventory\n    addresses: [127.0.0.1:1]\nredis:\n  url: \"" + tt.url + "\"\n"))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Parse = %v, want accepted", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Parse = %v, want an error with %q", err, tt.want)
			case err != nil && (strings.Contains(err.Error(), "s3cretpw") || strings.Contains(err.Error(), "qsecret")):
				t.Errorf("the error %q shows a password", err)
			}
		})
	}
}
