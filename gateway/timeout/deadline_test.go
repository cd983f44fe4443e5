package timeout

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

func TestParseTimeout(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"1H", time.Hour, false},
		{"2M", 2 * time.Minute, false},
		{"3S", 3 * time.Second, false},
		{"500m", 500 * time.Millisecond, false},
		{"250u", 250 * time.Microsecond, false},
		{"99999999n", 99999999, false},
		{"00000001S", time.Second, false},
		{"99999999H", maxDuration, false},
		{"", 0, true},
		{"S", 0, true},
		{"1", 0, true},
		{"1s", 0, true},
		{"1h", 0, true},
		{"0S", 0, true},
		{"-1S", 0, true},
		{"+1S", 0, true},
		{" 1S", 0, true},
		{"1 S", 0, true},
		{"1.5S", 0, true},
		{"123456789S", 0, true},
		{"１S", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseTimeout(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr || err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseTimeout(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestChoose(t *testing.T) {
	tests := []struct {
		name        string
		header      string
		def, max    time.Duration
		want        time.Duration
		wantClamped bool
		wantErr     bool
	}{
		{"default", "", 5 * time.Second, 30 * time.Second, 5 * time.Second, false, false},
		{"default above max", "", 5 * time.Second, time.Second, time.Second, false, false},
		{"shorter", "100m", 5 * time.Second, 30 * time.Second, 100 * time.Millisecond, false, false},
		{"longer than default", "10S", 5 * time.Second, 30 * time.Second, 10 * time.Second, false, false},
		{"clamped", "1H", 5 * time.Second, 30 * time.Second, 30 * time.Second, true, false},
		{"malformed", "soon", 5 * time.Second, 30 * time.Second, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, clamped, err := Choose(tt.header, tt.def, tt.max)
			if got != tt.want || clamped != tt.wantClamped || (err != nil) != tt.wantErr {
				t.Errorf("Choose(%q, %v, %v) = %v, %v, %v", tt.header, tt.def, tt.max, got, clamped, err)
			}
		})
	}
}

// FuzzParseTimeout: never panics; accepted values are positive and are
// exactly 1-8 digits plus a unit, which re-format to the same duration.
func FuzzParseTimeout(f *testing.F) {
	for _, s := range []string{"1H", "500m", "99999999H", "0S", "1s", "", "123456789n", "-1S"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := ParseTimeout(v)
		if err != nil {
			if d != 0 {
				t.Fatalf("ParseTimeout(%q) = %v with error", v, d)
			}
			return
		}
		if d <= 0 || len(v) < 2 || len(v) > 9 {
			t.Fatalf("ParseTimeout(%q) = %v", v, d)
		}
		n, err := strconv.ParseInt(v[:len(v)-1], 10, 64)
		if err != nil || n <= 0 || v[0] == '+' || v[0] == '-' {
			t.Fatalf("ParseTimeout(%q) accepted a value that is not 1-8 digits", v)
		}
		if d != maxDuration && d != time.Duration(n)*units[v[len(v)-1]] {
			t.Fatalf("ParseTimeout(%q) = %v, want %d x %v", v, d, n, units[v[len(v)-1]])
		}
	})
}

// TestParseTimeoutZero: a zero value is ErrZero, which is also
// ErrMalformed; other malformed values are not ErrZero.
func TestParseTimeoutZero(t *testing.T) {
	for _, tt := range []struct {
		in   string
		zero bool
	}{{"0S", true}, {"00000000m", true}, {"0n", true}, {"1s", false}, {"-0S", false}, {"123456789S", false}} {
		_, err := ParseTimeout(tt.in)
		if !errors.Is(err, ErrMalformed) || errors.Is(err, ErrZero) != tt.zero {
			t.Errorf("ParseTimeout(%q) = %v, want ErrMalformed, ErrZero %v", tt.in, err, tt.zero)
		}
	}
}
