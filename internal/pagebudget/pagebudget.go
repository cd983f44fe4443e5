// Package pagebudget bounds a list response by its encoded size as well as
// by its row count, so no page can pass gRPC's default 4 MiB message limit
// whatever is stored: rows stored before their fields were bounded, or a
// page size raised later, still give pages well under it.
//
// A list handler applies its page_size default and cap with Size, fetches
// one row more than that (to see whether a next page exists), and lets Fill
// pick the page: the rows in order up to the page size or the first row
// that no longer fits. When Fill left any fetched row out, the page gets a
// next page token pointing after its last row:
//
//	size := pagebudget.Size(req.GetPageSize(), defaultPageSize, maxPageSize)
//	rows, err := store.List(ctx, after, size+1)
//	...
//	resp.Items, more = pagebudget.Fill(rows, size, itemProto)
//	if more {
//		resp.NextPageToken = pagetoken.Encode(resp.Items[len(resp.Items)-1].GetSku())
//	}
//
// Fill and Size are pure functions; a Budget is for one page and one
// goroutine.
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

// Size returns the rows of a page for a requested page_size: def for 0, and
// at most max. The request's rules have refused a negative size.
func Size(requested int32, def, max int) int {
	switch n := int(requested); {
	case n == 0:
		return def
	case n > max:
		return max
	default:
		return n
	}
}

// Fill returns the page of rows, each converted by msg: the rows in order,
// up to size of them and as many as fit one Budget. more reports whether any
// row was left out, so a next page exists.
func Fill[R any, M proto.Message](rows []R, size int, msg func(R) M) (page []M, more bool) {
	var b Budget
	for _, r := range rows {
		m := msg(r)
		if len(page) == size || !b.Add(m) {
			return page, true
		}
		page = append(page, m)
	}
	return page, false
}
