package gateway

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// TestStaleFill offers the copies ten times stale.max_bytes through the
// real edge, one distinct item per GET, as a client walking the catalogue
// (or trying to fill the edge's memory) would: the copies never count
// more than the ceiling, the objects they really keep (measured by
// dropping them all) stay within it and the heap spans within twice it
// (the allocator's spans are shared with each request's short-lived
// buffers), the live heap does not grow with the number of GETs once the
// ceiling is reached, the newest copies are still served
// stale and the oldest are gone.
func TestStaleFill(t *testing.T) {
	if testing.Short() {
		t.Skip("offers 10x the ceiling through the edge")
	}
	// Answers of about 2 KiB and a 1 MiB ceiling: about 400 copies fit,
	// 4,000 GETs offer ten times that, and the heap's noise between
	// collections (a few hundred KiB) stays well inside the assertions.
	const maxBytes, n = 1 << 20, 4000
	// The access log goes nowhere: the harness's log buffer would keep
	// every line and be counted as heap.
	h, fail := staleHarness(t, setup{
		cfg:  func(c *config.Config) { c.Stale.MaxBytes = maxBytes },
		opts: []Option{WithLogger(discardLogger())},
	})
	h.inv.getItem = func(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		if err := fail.get(); err != nil {
			return nil, err
		}
		return &inventoryv1.Item{Sku: r.GetSku(), Name: strings.Repeat("w", 2000), Available: 7}, nil
	}
	path := func(i int) string { return fmt.Sprintf("/api/inventory/fill-%06d", i) }
	var (
		offered int64
		early   heap
	)
	for i := range n {
		if i == n/4 {
			early = readHeap()
		}
		got := h.do("GET", path(i), aliceToken, "")
		if got.status != 200 {
			t.Fatalf("GET %s = %d %s", path(i), got.status, got.body)
		}
		offered += int64(len(got.body))
		if st := h.srv.copies.lru.Stats(); st.Bytes > maxBytes {
			t.Fatalf("after %d GETs the copies count %d B, want <= %d", i+1, st.Bytes, maxBytes)
		}
	}
	full, st := readHeap(), h.srv.copies.lru.Stats()
	if st.Evictions == 0 || int(st.Evictions)+st.Copies != n {
		t.Errorf("Stats() = %+v, want %d copies and evictions together", st, n)
	}
	if grew := full.alloc - early.alloc; grew > maxBytes/4 {
		t.Errorf("live heap grew %d B from GET %d to GET %d, want <= %d: something keeps memory per GET", grew, n/4, n, maxBytes/4)
	}
	fail.set(status.Error(codes.Unavailable, "inventory down"))
	if got := h.do("GET", path(n-1), aliceToken, ""); got.status != 200 || got.header.Get("Cache-Status") == "" {
		t.Errorf("newest item while down = %d %q, want its stale copy", got.status, got.header.Get("Cache-Status"))
	}
	if got := h.do("GET", path(0), aliceToken, ""); got.status != 503 {
		t.Errorf("oldest item while down = %d, want 503 (its copy evicted)", got.status)
	}
	h.srv.copies.lru.SetMax(0)
	held := readHeap()
	h.srv.copies.lru.SetMax(maxBytes)
	objects, spans := full.alloc-held.alloc, full.inuse-held.inuse
	t.Logf("offered %d copies (%d B of bodies) to a %d B ceiling: kept %d copies counted as %d B, %d evictions; "+
		"live heap %+d B from GET %d to %d; dropping the copies freed %d B of objects, %d B of in-use spans",
		n, offered, maxBytes, st.Copies, st.Bytes, st.Evictions, full.alloc-early.alloc, n/4, n, objects, spans)
	if objects > maxBytes*11/10 {
		t.Errorf("the copies kept %d B of objects, want <= %d (the ceiling, within 10%%)", objects, maxBytes*11/10)
	}
	if spans > 2*maxBytes {
		t.Errorf("the copies kept %d B of in-use spans, want <= %d (twice the ceiling)", spans, 2*maxBytes)
	}
}

// heap is the heap's live objects and in-use spans, in bytes.
type heap struct{ alloc, inuse int64 }

// readHeap reads the heap after two full collections (the second empties
// sync.Pools' victim caches).
func readHeap() heap {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return heap{int64(m.HeapAlloc), int64(m.HeapInuse)}
}
