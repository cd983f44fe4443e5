// Package pagebudget bounds a list response by its encoded size as well as
// by its row count, so no page can pass gRPC's default 4 MiB message limit
// whatever is stored: rows stored before their fields were bounded, or a
// page size raised later, still give pages well under it.
//
// A list handler fetches its rows as usual (page size + 1, to see whether
// a next page exists), then offers them to a Budget in order and stops at
// the page size or the first row Add refuses; if any fetched row is left,
// the page gets a next page token pointing after the last row it holds:
//
//	var b pagebudget.Budget
//	for _, r := range rows {
//		if len(page) == size || !b.Add(r) {
//			break
//		}
//		page = append(page, r)
//	}
//	more := len(page) < len(rows)
//
// A Budget is for one page and one goroutine.
package pagebudget

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// MaxBytes is the most a whole page encodes to: 1 MiB, a quarter of gRPC's
// default 4 MiB message limit. The rows get MaxBytes less tokenReserve.
const MaxBytes = 1 << 20

// tokenReserve is kept for the rest of the response: the next page token
// and the field tags, each well under 1 KiB.
const tokenReserve = 1 << 10

// Budget adds up the encoded size of one page's rows. The zero value is an
// empty page.
type Budget struct {
	used int
	rows int
}

// Add reports whether m still fits the page and, if so, counts it. The
// first row always fits, so a page always makes progress: only a row
// stored before its fields were bounded can pass MaxBytes on its own, and
// it is then the only row of its page.
func (b *Budget) Add(m proto.Message) bool {
	// A repeated message field costs its tag, its length and its bytes.
	n := protowire.SizeTag(1) + protowire.SizeBytes(proto.Size(m))
	if b.rows > 0 && b.used+n > MaxBytes-tokenReserve {
		return false
	}
	b.used += n
	b.rows++
	return true
}
