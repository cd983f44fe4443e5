package strictyaml

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDecodeNode(t *testing.T) {
	type inner struct {
		Max int `yaml:"max"`
	}
	type outer struct {
		Ext yaml.Node `yaml:"ext"`
	}
	tests := []struct {
		name    string
		doc     string
		wantErr string
		wantMax int
	}{
		{"ok", "ext:\n  max: 3\n", "", 3},
		{"absent", "other: 1\n", "", 0},
		{"unknown key names path and line", "ext:\n  max: 3\n  mux: 4\n", "up.ext.mux: unknown field (line 3)", 0},
		{"wrong type", "ext:\n  max: lots\n", "up.ext.max", 0},
		{"fraction into an integer", "ext:\n  max: 0.5\n", "up.ext.max: want an integer", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o struct {
				outer `yaml:",inline"`
				Other int `yaml:"other"`
			}
			if err := yaml.Unmarshal([]byte(tt.doc), &o); err != nil {
				t.Fatal(err)
			}
			var got inner
			err := DecodeNode(&o.Ext, "up.ext", &got)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeNode() = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.Max != tt.wantMax {
				t.Errorf("DecodeNode() = %+v, %v; want max %d", got, err, tt.wantMax)
			}
		})
	}
}
