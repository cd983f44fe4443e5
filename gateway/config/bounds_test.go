package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/internal/boundedfile"
)

// TestLoadConfigBounded: a config file over MaxFileBytes, or a stream
// such as /dev/urandom, is refused with an error naming the file and the
// bound (check-config on /dev/urandom grew to 23.6 GB); a config within
// the bound loads.
func TestLoadConfigBounded(t *testing.T) {
	dev, err := yaml.Marshal(Dev(43100))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A valid config padded with a comment to just over the bound.
	pad := append([]byte("# "), bytes.Repeat([]byte("x"), MaxFileBytes)...)
	tests := []struct {
		name   string
		path   string
		tooBig bool
	}{
		{"dev config", write("dev.yaml", dev), false},
		{"padded over the bound", write("big.yaml", append(append(dev, pad...), '\n')), true},
		{"endless stream", "/dev/urandom", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skip(err)
			}
			_, err := Load(tt.path)
			if !tt.tooBig {
				if err != nil {
					t.Fatalf("Load(%s) = %v", tt.path, err)
				}
				return
			}
			if !errors.Is(err, boundedfile.ErrTooLarge) || !strings.Contains(err.Error(), tt.path) ||
				!strings.Contains(err.Error(), strconv.Itoa(MaxFileBytes)) {
				t.Fatalf("Load(%s) = %v, want a too-large error naming the file and %d", tt.path, err, MaxFileBytes)
			}
		})
	}
}

// TestCORSOriginsAreOrigins: an allowed origin is what a browser sends in
// Origin, scheme://host[:port] and nothing else, with a host a DNS name or
// IP literal can be; a 50 MB "origin" passed check-config and reload
// applied it. The error quotes a long value only in part.
func TestCORSOriginsAreOrigins(t *testing.T) {
	long := "https://" + strings.Repeat("a", 50<<10) + ".example.com"
	tests := []struct {
		origin string
		ok     bool
	}{
		{"*", true},
		{"https://shop.example.com", true},
		{"http://localhost:3000", true},
		{"http://127.0.0.1:8080", true},
		{"http://[::1]:8080", true},
		{"https://xn--bcher-kva.example", true},
		{long, false},
		{"https://" + strings.Repeat("a", 64) + ".example.com", false}, // a label over 63
		{"https://shop.example.com/", false},
		{"https://shop.example.com/path", false},
		{"https://user@shop.example.com", false},
		{"https://shop.example.com#top", false},
		{"https://shop.example.com?", false},
		{"https://shop.example.com:", false},
		{"https://shop.example.com:99999", false},
		{"https://shop.example.com:0", false},
		{"https://shop_example.com", false},
		{"https://shop..example.com", false},
		{"https://Shop.example.com", false},
		{"ftp://shop.example.com", false},
		{"https:shop.example.com", false},
		{"null", false},
		{"", false},
	}
	for _, tt := range tests {
		name := tt.origin
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			c := Dev(43100)
			c.CORS.AllowedOrigins = []string{tt.origin}
			b, err := yaml.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(b)
			if tt.ok {
				if err != nil {
					t.Fatalf("Parse(origin %.60q) = %v, want ok", tt.origin, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "cors.allowed_origins[0]") {
				t.Fatalf("Parse(origin %.60q) = %v, want an error naming cors.allowed_origins[0]", tt.origin, err)
			}
			if len(err.Error()) > 1000 {
				t.Errorf("the error is %d bytes long; it should quote the value in part", len(err.Error()))
			}
		})
	}
}
