package shed_test

import (
	"sync"
	"testing"

	"github.com/portico-gateway/portico/gateway/shed"
)

func TestKeyed(t *testing.T) {
	type step struct {
		op    string // "take" or "release"
		key   string
		limit int
		want  bool // take's answer
	}
	tests := []struct {
		name     string
		steps    []step
		inFlight map[string]int
		keys     int
		largest  int // Stats's
	}{
		{"each key has its own cap", []step{
			{"take", "a", 2, true}, {"take", "a", 2, true}, {"take", "a", 2, false},
			{"take", "b", 2, true},
		}, map[string]int{"a": 2, "b": 1}, 2, 2},
		{"a release frees one slot", []step{
			{"take", "a", 1, true}, {"take", "a", 1, false}, {"release", "a", 0, false}, {"take", "a", 1, true},
		}, map[string]int{"a": 1}, 1, 1},
		{"no cap", []step{
			{"take", "a", 0, true}, {"take", "a", -1, true}, {"take", "a", 0, true},
		}, map[string]int{"a": 3}, 1, 3},
		{"a lower cap after a reload refuses until enough leave", []step{
			{"take", "a", 3, true}, {"take", "a", 3, true}, {"take", "a", 1, false},
			{"release", "a", 0, false}, {"take", "a", 1, false}, {"release", "a", 0, false}, {"take", "a", 1, true},
		}, map[string]int{"a": 1}, 1, 1},
		{"released keys are forgotten", []step{
			{"take", "a", 1, true}, {"release", "a", 0, false}, {"release", "a", 0, false},
		}, map[string]int{"a": 0}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k shed.Keyed
			for i, s := range tt.steps {
				if s.op == "release" {
					k.Release(s.key)
					continue
				}
				if got := k.TryAcquire(s.key, s.limit); got != s.want {
					t.Fatalf("step %d: TryAcquire(%q, %d) = %v, want %v", i, s.key, s.limit, got, s.want)
				}
			}
			for key, want := range tt.inFlight {
				if got := k.InFlight(key); got != want {
					t.Errorf("InFlight(%q) = %d, want %d", key, got, want)
				}
			}
			if got := k.Keys(); got != tt.keys {
				t.Errorf("Keys() = %d, want %d", got, tt.keys)
			}
			if keys, largest := k.Stats(); keys != tt.keys || largest != tt.largest {
				t.Errorf("Stats() = %d, %d, want %d, %d", keys, largest, tt.keys, tt.largest)
			}
		})
	}
}

func TestKeyedNeverOverCapUnderContention(t *testing.T) {
	const limit = 3
	var (
		k         shed.Keyed
		mu        sync.Mutex
		now, peak int
		wg        sync.WaitGroup
	)
	for range 16 {
		wg.Go(func() {
			for range 200 {
				if !k.TryAcquire("a", limit) {
					continue
				}
				mu.Lock()
				now++
				peak = max(peak, now)
				now--
				mu.Unlock()
				k.Release("a")
			}
		})
	}
	wg.Wait()
	if peak > limit {
		t.Errorf("peak holders = %d, want at most %d", peak, limit)
	}
	if k.Keys() != 0 {
		t.Errorf("Keys() = %d after every release, want 0", k.Keys())
	}
}
