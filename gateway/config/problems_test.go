package config

import (
	"strings"
	"testing"
)

// TestProblemTypeBaseChecked: a type_base that is not an absolute http(s)
// URI ending in "/" is a config error naming the key.
func TestProblemTypeBaseChecked(t *testing.T) {
	for _, tt := range []struct {
		base string
		ok   bool
	}{
		{"https://api.example.com/problems/", true},
		{"http://127.0.0.1:8080/shop/problems/", true},
		{"https://api.example.com/", true},
		{"/shop/problems/", false},
		{"problems/", false},
		{"https://api.example.com/problems", false},
		{"ftp://api.example.com/problems/", false},
		{"https:///problems/", false},
		{"https://api.example.com/problems/?v=1", false},
		{"https://api.example.com/problems/#x", false},
		{"https://user:pw@api.example.com/problems/", false},
	} {
		t.Run(tt.base, func(t *testing.T) {
			c := Dev(0)
			c.Problems.TypeBase = tt.base
			err := c.Validate()
			if tt.ok && err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
			if !tt.ok && (err == nil || !strings.Contains(err.Error(), "problems.type_base")) {
				t.Errorf("Validate() = %v, want an error naming problems.type_base", err)
			}
		})
	}
}
