package cli

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestCompletion: each script names every command and every flag of each,
// read from the commands themselves; bash's completes as a person types
// (run in a real bash when there is one); a shell it does not know is a
// usage error.
func TestCompletion(t *testing.T) {
	specs := commandSpecs()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := Main([]string{"completion", shell}, &out, &errb); code != 0 {
				t.Fatalf("portico completion %s = %d; stderr %s", shell, code, errb.String())
			}
			for _, s := range specs {
				if !strings.Contains(out.String(), s.name) {
					t.Errorf("the %s script lacks the command %s", shell, s.name)
				}
				for _, f := range s.flags {
					if !strings.Contains(out.String(), f.Name) {
						t.Errorf("the %s script lacks %s --%s", shell, s.name, f.Name)
					}
				}
			}
			if path, err := exec.LookPath(shell); err == nil && shell != "bash" {
				check := map[string][]string{"zsh": {"-n"}, "fish": {"--no-execute"}}[shell]
				cmd := exec.Command(path, check...)
				cmd.Stdin = &out
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s rejects the script: %v %s", shell, err, b)
				}
			}
		})
	}
	t.Run("bash completes", func(t *testing.T) {
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("no bash")
		}
		var script, errb bytes.Buffer
		Main([]string{"completion", "bash"}, &script, &errb)
		tests := []struct {
			words []string
			want  string
		}{
			{[]string{"portico", "gat"}, "gateway"},
			{[]string{"portico", "check"}, "check-config"},
			{[]string{"portico", "desc"}, "describe"},
			{[]string{"portico", "describe", "--js"}, "--json"},
			{[]string{"portico", "dev", "--base"}, "--base-port"},
			{[]string{"portico", "gateway", "--con"}, "--config"},
			{[]string{"portico", "help", "inv"}, "inventory"},
		}
		for _, tt := range tests {
			probe := script.String() + "\nCOMP_WORDS=(" + strings.Join(tt.words, " ") + "); COMP_CWORD=" +
				strconv.Itoa(len(tt.words)-1) + "; _portico; echo \"${COMPREPLY[*]}\"\n"
			cmd := exec.Command(bash, "--norc", "--noprofile")
			cmd.Stdin = strings.NewReader(probe)
			b, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(b)) != tt.want {
				t.Errorf("completing %q = %q (%v), want %q", tt.words, b, err, tt.want)
			}
		}
	})
	t.Run("unknown shell", func(t *testing.T) {
		var out, errb bytes.Buffer
		if code := Main([]string{"completion", "tcsh"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "want bash, zsh or fish") {
			t.Errorf("portico completion tcsh = %d, stderr %q; want 2 and the shells", code, errb.String())
		}
	})
}
