package cli

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
)

func TestHelp(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    []string // substrings of stdout
		notOut     []string // must not appear in stdout
		wantStderr string   // substring of stderr; "" means stderr must be empty
	}{
		{"help", []string{"help"}, 0, []string{"usage: portico <command>", "check-config", "describe", "version"}, nil, ""},
		{"--help", []string{"--help"}, 0, []string{"usage: portico <command>"}, nil, ""},
		{"-h", []string{"-h"}, 0, []string{"usage: portico <command>"}, nil, ""},
		{"help gateway", []string{"help", "gateway"}, 0, []string{"usage: portico gateway --config FILE", "--config FILE", "--log-level"}, []string{"  -config", "check-config"}, ""},
		{"gateway --help", []string{"gateway", "--help"}, 0, []string{"usage: portico gateway", "--config FILE"}, nil, ""},
		{"check-config --help", []string{"check-config", "--help"}, 0, []string{"usage: portico check-config [--diff-against URL_OR_FILE] FILE"}, nil, ""},
		{"help describe", []string{"help", "describe"}, 0, []string{"usage: portico describe [--json] [--reflect] FILE", "--config FILE", "--json", "--reflect"}, nil, ""},
		{"help order", []string{"help", "order"}, 0, []string{"--inventory", "--upstream-timeout"}, nil, ""},
		{"help dev", []string{"help", "dev"}, 0, []string{"--base-port N", "--replicas N", "base+10k", "--postgres URL"}, nil, ""},
		{"help help", []string{"help", "help"}, 0, []string{"usage: portico <command>"}, nil, ""},
		{"help version", []string{"help", "version"}, 0, []string{"usage: portico version"}, nil, ""},
		{"help unknown", []string{"help", "frobnicate"}, 2, nil, nil, "unknown command"},
		{"help unknown, close to one", []string{"help", "chek-config"}, 2, nil, nil, `unknown command "chek-config"; did you mean check-config?`},
		{"unknown command, close to one", []string{"gatewya"}, 2, nil, nil, `unknown command "gatewya"; did you mean gateway?`},
		{"unknown flag, close to one", []string{"gateway", "--confg", "x"}, 2, nil, nil, "flag provided but not defined: -confg; did you mean --config?"},
		{"--version", []string{"--version"}, 0, []string{"portico ", " commit ", "go"}, nil, ""},
		{"-v", []string{"-v"}, 0, []string{"portico ", " commit "}, nil, ""},
		{"help lists completion", []string{"help"}, 0, []string{"completion    print a shell completion script"}, nil, ""},
		{"help completion", []string{"help", "completion"}, 0, []string{"usage: portico completion bash|zsh|fish"}, nil, ""},
		{"help two args", []string{"help", "gateway", "order"}, 2, nil, nil, "one command"},
		{"bad flag points to help", []string{"gateway", "--nope"}, 2, nil, nil, "portico help gateway"},
		{"check-config two files", []string{"check-config", "a", "b"}, 2, nil, nil, `unexpected argument "b"`},
		{"describe without a config", []string{"describe"}, 2, nil, nil, "want the gateway config FILE (as the argument, or --config FILE)"},
		{"describe two files", []string{"describe", "a", "b"}, 2, nil, nil, `unexpected argument "b"`},
		{"describe a file twice", []string{"describe", "--config", "a", "b"}, 2, nil, nil, "give the config FILE once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if got := Main(tt.args, &out, &errb); got != tt.wantCode {
				t.Fatalf("Main(%q) = %d, want %d; stdout %q, stderr %q", tt.args, got, tt.wantCode, out.String(), errb.String())
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout = %q, want it to contain %q", out.String(), s)
				}
			}
			for _, s := range tt.notOut {
				if strings.Contains(out.String(), s) {
					t.Errorf("stdout = %q, want no %q", out.String(), s)
				}
			}
			if tt.wantStderr == "" && errb.Len() > 0 {
				t.Errorf("stderr = %q, want empty", errb.String())
			}
			if !strings.Contains(errb.String(), tt.wantStderr) {
				t.Errorf("stderr = %q, want it to mention %q", errb.String(), tt.wantStderr)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if got := Main([]string{"version"}, &out, &errb); got != 0 {
		t.Fatalf("portico version = %d; stderr %q", got, errb.String())
	}
	if !strings.HasPrefix(out.String(), "portico ") || !strings.Contains(out.String(), "go1.") {
		t.Errorf("portico version printed %q", out.String())
	}
}

func TestVersionText(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	info := func(version string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/portico-gateway/portico", Version: version}, Settings: settings}
	}
	tests := []struct {
		name     string
		info     *debug.BuildInfo
		ldCommit string
		want     string
	}{
		{"tagged module with vcs", info("v1.2.3", vcs("vcs.revision", "abc123", "vcs.modified", "false")), "", "portico v1.2.3 commit abc123 go1.26.8\n"},
		{"modified tree", info("(devel)", vcs("vcs.revision", "abc123", "vcs.modified", "true")), "", "portico (devel) commit abc123+modified go1.26.8\n"},
		{"no vcs stamp falls back to ldflags", info("(devel)", nil), "def456", "portico (devel) commit def456 go1.26.8\n"},
		{"vcs stamp wins over ldflags", info("(devel)", vcs("vcs.revision", "abc123")), "def456", "portico (devel) commit abc123 go1.26.8\n"},
		{"nothing known", info("", nil), "", "portico (devel) commit unknown go1.26.8\n"},
		{"no build info", nil, "", "portico (devel) commit unknown " + goVersionUnknown + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionText(tt.info, tt.ldCommit); got != tt.want {
				t.Errorf("versionText = %q, want %q", got, tt.want)
			}
		})
	}
}
