package problem

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestJSONBoundsEchoes: a problem quoting what the client sent (a 900 KB
// unknown key, thousands of violations) stays small and valid.
func TestJSONBoundsEchoes(t *testing.T) {
	huge := strings.Repeat("k", 900_000)
	many := make([]FieldViolation, 5000)
	for i := range many {
		many[i] = FieldViolation{Field: fmt.Sprintf("f%d", i), Detail: "bad"}
	}
	tests := []struct {
		name       string
		p          *Problem
		wantErrors int
	}{
		{"huge unknown key", &Problem{Status: 400, Code: "INVALID_ARGUMENT", Detail: "unknown field " + huge, Instance: "/api/" + huge,
			Errors: []FieldViolation{{Field: huge, Pointer: "#/" + huge, Detail: "unknown field " + huge}}}, 1},
		{"multi-byte at the cut", &Problem{Status: 400, Code: "INVALID_ARGUMENT", Detail: strings.Repeat("é", MaxEchoBytes)}, 0},
		{"many violations", &Problem{Status: 400, Code: "INVALID_ARGUMENT", Errors: many}, MaxErrors},
		{"short members kept", &Problem{Status: 400, Code: "INVALID_ARGUMENT", Detail: "d", Errors: []FieldViolation{{Field: "lines[0].sku", Pointer: "#/lines/0/sku", Detail: "bad"}}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.p.JSON()
			if len(body) > 8*MaxEchoBytes+MaxErrors*256 {
				t.Errorf("JSON() is %d bytes, want it bounded", len(body))
			}
			if !utf8.Valid(body) {
				t.Error("JSON() is not valid UTF-8")
			}
			var got Problem
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("JSON() does not parse: %v", err)
			}
			if len(got.Errors) != tt.wantErrors {
				t.Errorf("errors = %d, want %d", len(got.Errors), tt.wantErrors)
			}
			if tt.name == "short members kept" && (got.Detail != "d" || got.Errors[0] != tt.p.Errors[0]) {
				t.Errorf("short members changed: %+v", got)
			}
		})
	}
}
