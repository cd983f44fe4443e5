package logging

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestConsole(t *testing.T) {
	at := time.Date(2026, 11, 30, 7, 41, 2, 15_000_000, time.UTC)
	clock := at.Local().Format("15:04:05.000")
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"a record", []string{`{"time":"2026-11-30T07:41:02.015Z","level":"INFO","msg":"serving","service":"inventory","addr":"127.0.0.1:43101"}` + "\n"},
			clock + " INFO  inventory serving addr=127.0.0.1:43101\n"},
		{"values quoted only when they must be", []string{`{"time":"2026-11-30T07:41:02.015Z","level":"WARN","msg":"child exited","service":"dev","exit":"exit status 1","pid":42,"ok":true,"empty":"","eq":"a=b","obj":{"a":[1,2]}}` + "\n"},
			clock + ` WARN  dev       child exited exit="exit status 1" pid=42 ok=true empty="" eq="a=b" obj={"a":[1,2]}` + "\n"},
		{"a redacted value stays redacted", []string{`{"time":"2026-11-30T07:41:02.015Z","level":"INFO","msg":"request","service":"gateway","authorization":"[REDACTED]"}` + "\n"},
			clock + " INFO  gateway   request authorization=[REDACTED]\n"},
		{"not a record passes unchanged", []string{"plain text = here\n", "[1,2]\n"}, "plain text = here\n[1,2]\n"},
		{"a record in pieces, two in one write", []string{`{"time":"2026-11-30T07:41:02.015Z","level":"INFO",`, `"msg":"a","service":"s"}` + "\n" + `{"level":"ERROR","msg":"b"}` + "\n"},
			clock + " INFO  s         a\n ERROR           b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := Console(&out)
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if out.String() != tt.want {
				t.Errorf("Console wrote\n%q\nwant\n%q", out.String(), tt.want)
			}
		})
	}
}

// TestConsoleRendersTheLogger: New's records through Console read as one
// line each, redacted as in JSON.
func TestConsoleRendersTheLogger(t *testing.T) {
	var out bytes.Buffer
	l := New(Console(&out), "edge", slog.LevelInfo)
	l.Info("upstream said Bearer abc", "route", "GET /api/x", "status", 502)
	got := out.String()
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, " INFO  edge      upstream said Bearer [REDACTED] route=\"GET /api/x\" status=502\n") {
		t.Errorf("Console(New) wrote %q", got)
	}
}
