package stale

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// TestSizeMatchesHeap fills an LRU with copies of several body sizes,
// each allocated afresh as the edge allocates them, and compares the heap
// they keep with the bytes the LRU counts: the ceiling is only a bound on
// memory if Size does not undercount what an entry really costs.
func TestSizeMatchesHeap(t *testing.T) {
	const n = 20000
	for _, body := range []int{0, 200, 1500} {
		t.Run(fmt.Sprint(body), func(t *testing.T) {
			l := NewLRU(1 << 40)
			before := heapInUse()
			for i := range n {
				etag := fmt.Sprintf(`W/"%022d"`, i)
				l.Put(NewKey(etag), Copy{Stored: time.Now(), ContentType: string([]byte("application/json")), ETag: etag, Body: make([]byte, body)})
			}
			held := heapInUse() - before
			st := l.Stats()
			runtime.KeepAlive(l)
			ratio := float64(held) / float64(st.Bytes)
			t.Logf("%d copies of %d B bodies: counted %d B (%d per copy), heap %d B (%d per copy), heap/counted %.2f",
				n, body, st.Bytes, st.Bytes/n, held, held/n, ratio)
			if ratio > 1.1 {
				t.Errorf("the heap keeps %.2fx what the LRU counts, want <= 1.1", ratio)
			}
		})
	}
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
