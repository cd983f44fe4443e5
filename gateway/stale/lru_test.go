package stale

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func copyOf(n int) Copy {
	return Copy{Stored: time.Unix(1, 0), ContentType: "application/json", Body: []byte(strings.Repeat("x", n))}
}

// TestLRUFill fills an LRU far past its ceiling: it never holds more
// than the ceiling, evicts the least recently used first, and keeps the
// most recent copies.
func TestLRUFill(t *testing.T) {
	const max = 64 << 10
	l := NewLRU(max)
	one := size(copyOf(1000))
	for i := range 1000 { // ~1.1 MB offered to a 64 KiB ceiling
		if !l.Put(NewKey(fmt.Sprint(i)), copyOf(1000)) {
			t.Fatalf("Put(%d) = false, want kept", i)
		}
		if st := l.Stats(); st.Bytes > max {
			t.Fatalf("after %d puts Bytes = %d, want <= %d", i+1, st.Bytes, max)
		}
	}
	st := l.Stats()
	fits := int(max / one)
	if st.Copies != fits || st.Evictions != uint64(1000-fits) {
		t.Errorf("Stats() = %+v, want %d copies and %d evictions", st, fits, 1000-fits)
	}
	t.Logf("ceiling %d B, held %d B in %d copies of %d B each, %d evictions", max, st.Bytes, st.Copies, one, st.Evictions)
	if _, ok := l.Get(NewKey("0")); ok {
		t.Error("Get(oldest) found a copy, want it evicted")
	}
	if _, ok := l.Get(NewKey("999")); !ok {
		t.Error("Get(newest) found nothing")
	}
}

func TestLRU(t *testing.T) {
	tests := []struct {
		name    string
		max     int64
		puts    []int // body sizes, keyed by index
		touch   int   // Get this key before the last put; -1 none
		want    []bool
		wantMax int64
	}{
		{"fits", 4096, []int{10, 10}, -1, []bool{true, true}, 0},
		{"too large for a quarter", 4096, []int{2000}, -1, []bool{false}, 0},
		{"off", 0, []int{0}, -1, []bool{false}, 0},
		{"recently used survives", 4 * size(copyOf(100)), []int{100, 100, 100, 100, 100}, 0, []bool{true, false, true, true, true}, 0},
		{"shrunk", 4096, []int{10, 10, 10}, -1, []bool{false, false, true}, size(copyOf(10))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLRU(tt.max)
			for i, n := range tt.puts {
				if i == len(tt.puts)-1 && tt.touch >= 0 {
					l.Get(NewKey(fmt.Sprint(tt.touch)))
				}
				l.Put(NewKey(fmt.Sprint(i)), copyOf(n))
			}
			if tt.wantMax > 0 {
				l.SetMax(tt.wantMax)
			}
			for i, want := range tt.want {
				if _, got := l.Get(NewKey(fmt.Sprint(i))); got != want {
					t.Errorf("Get(%d) found = %v, want %v", i, got, want)
				}
			}
			if st := l.Stats(); st.Bytes > max(tt.max, 0) {
				t.Errorf("Bytes = %d over the ceiling %d", st.Bytes, tt.max)
			}
		})
	}
}

func TestReplaceCountsOnce(t *testing.T) {
	l := NewLRU(1 << 20)
	k := NewKey("a")
	l.Put(k, copyOf(100))
	l.Put(k, copyOf(50))
	if st := l.Stats(); st.Copies != 1 || st.Bytes != size(copyOf(50)) {
		t.Errorf("Stats() = %+v, want one copy of %d bytes", st, size(copyOf(50)))
	}
}

func TestNewKey(t *testing.T) {
	if NewKey("a", "bc") == NewKey("ab", "c") {
		t.Error(`NewKey("a", "bc") = NewKey("ab", "c"), want different`)
	}
	if NewKey("a") != NewKey("a") {
		t.Error("NewKey is not deterministic")
	}
}

func BenchmarkLRUPut(b *testing.B) {
	l := NewLRU(1 << 20)
	c := copyOf(512)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l.Put(NewKey(fmt.Sprint(i%4096)), c)
	}
}
