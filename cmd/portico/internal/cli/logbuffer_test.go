package cli

import (
	"testing"

	"github.com/portico-gateway/portico/internal/logging"
)

// TestLogBuffer: PORTICO_LOG_BUFFER sets the log buffer in bytes, unset
// means the default, and anything but a bounded byte count is refused.
func TestLogBuffer(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    int
		wantErr bool
	}{
		{name: "unset", value: "", want: logging.DefaultBuffer},
		{name: "none", value: "0", want: 0},
		{name: "a size", value: "4096", want: 4096},
		{name: "the largest", value: "16777216", want: maxLogBuffer},
		{name: "too large", value: "16777217", wantErr: true},
		{name: "negative", value: "-1", wantErr: true},
		{name: "not a number", value: "64KiB", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == logging.BufferEnv {
					return tt.value
				}
				return ""
			}
			got, err := logBuffer(getenv)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("logBuffer(%q) = %d, %v; want %d, error %v", tt.value, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
