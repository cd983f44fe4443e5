package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// childEnv marks a process the harness started from this test binary: it
// runs Main (backend, stock, vanguard, load) instead of the tests.
const childEnv = "BENCHEDGE_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Setenv(childEnv, "1") // inherited by every process the harness starts
	os.Exit(m.Run())
}

// TestEdgeHarnessSmoke runs make bench-edge's harness with one-second
// phases: it checks the harness works (every system starts, answers the
// same item and is measured; the files are written), not the figures.
func TestEdgeHarnessSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds portico and starts six processes")
	}
	dir := t.TempDir()
	f := compareFlags{root: "../../../..", dir: dir, out: filepath.Join(dir, "out", "bench-edge"),
		round: 500 * time.Millisecond, rounds: 2, conns: 4, serial: 400 * time.Millisecond, open: 200 * time.Millisecond, vanguard: true, idle: 50}
	// The bound covers building portico and the other systems without
	// -race, which on a busy 2-core host with a cold cache alone took over
	// two minutes (the build was killed); it bounds, it does not time.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := compare(ctx, f, &stdout, &stderr); err != nil {
		t.Fatalf("compare() = %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(f.out + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var rep EdgeReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for _, s := range rep.Systems {
		keys = append(keys, s.Key)
		if !s.Equivalent {
			t.Errorf("(%s) %s: not equivalent: %s", s.Key, s.Name, s.EquivNote)
		}
		if s.MedianRPS <= 0 || s.SerialP50us <= 0 || s.OpenRate <= 0 {
			t.Errorf("(%s) %s: figures missing: %+v", s.Key, s.Name, s)
		}
		if len(s.SerialRoundP50us) != f.rounds {
			t.Errorf("(%s) %s: serial rounds %v, want %d interleaved rounds", s.Key, s.Name, s.SerialRoundP50us, f.rounds)
		}
	}
	if got := strings.Join(keys, ","); got != "a,b,c,d,d0,dd,e" {
		t.Errorf("systems = %s, want a,b,c,d,d0,dd,e", got)
	}
	for _, s := range rep.Systems {
		if idle := s.Key == "b" || s.Key == "d" || s.Key == "e"; idle != (s.IdleConnKiB != 0) {
			t.Errorf("(%s): idle KiB per connection %v", s.Key, s.IdleConnKiB)
		}
		if order := s.Key == "d" || s.Key == "dd"; order != (s.CreateOrderCPUus != 0) {
			t.Errorf("(%s): CreateOrder CPU per request %v", s.Key, s.CreateOrderCPUus)
		}
	}
	for _, ext := range []string{".md", ".svg"} {
		if fi, err := os.Stat(f.out + ext); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v (empty or missing)", ext, err)
		}
	}
	if rep.IdleFloorKiB == 0 {
		t.Errorf("net/http alone: idle KiB per connection %v", rep.IdleFloorKiB)
	}
	for _, k := range []string{"d/b", "d/e", "cpu dd/d", "cpu dd/d CreateOrder", "idleConnKiB(net/http)"} {
		if _, ok := rep.Ratios[k]; !ok {
			t.Errorf("ratios = %v, want %s", rep.Ratios, k)
		}
	}
}

func TestDropZero(t *testing.T) {
	tests := []struct {
		name, a, b string
		equal      bool
	}{
		{"emitted zeros", `{"sku":"k","reserved":"0","sold":0,"tags":[],"m":{}}`, `{"sku":"k"}`, true},
		{"different value", `{"sku":"k","available":"100"}`, `{"sku":"k","available":"99"}`, false},
		{"nested zeros", `{"p":{"amountMinor":"0","currency":""}}`, `{}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a, b any
			_ = json.Unmarshal([]byte(tt.a), &a)
			_ = json.Unmarshal([]byte(tt.b), &b)
			if got := jsonEqual(dropZero(a), dropZero(b)); got != tt.equal {
				t.Errorf("dropZero equal(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.equal)
			}
		})
	}
}
