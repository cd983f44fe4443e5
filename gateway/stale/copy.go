package stale

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"time"
)

// Copy is one kept answer.
type Copy struct {
	// Stored is when the upstream's answer arrived; Age counts from it.
	Stored time.Time
	// ContentType is the answer's Content-Type, the one header kept: the
	// edge writes every other header of a stale answer afresh.
	ContentType string
	// ETag is the answer's ETag header as the edge wrote it (at most
	// maxETag bytes; a longer one is not kept), so a stale answer carries
	// it and its If-Match / If-None-Match are judged on it.
	ETag string
	// Body is the answer's body; it is never changed once stored.
	Body []byte
}

// Size is what c costs a cache besides its key: body and header bytes,
// the body's rounding up to the allocator's size class (at most an
// eighth), plus the fixed bookkeeping of an entry. It is meant to count
// at least the heap an LRU entry keeps (TestSizeMatchesHeap holds it to
// that), so stale.max_bytes bounds memory, not just bodies.
func (c Copy) Size() int64 {
	return int64(len(c.Body)+len(c.Body)/8+len(c.ContentType)+len(c.ETag)) + entryOverhead
}

// entryOverhead is an LRU entry's fixed cost: the entry (112 B), its list
// element (48 B), its map slot at the map's fullest growth (up to about
// 80 B) and the small headers' size classes. Measured: 20,000 copies with
// empty bodies keep 294 B of heap each; with 200 B bodies 511 B; with
// 1,500 B bodies 1,934 B.
const entryOverhead = 256

// Key names a copy: a SHA-256 of its parts, so a key is 32 bytes whatever
// the request, and the parts (a subject, a query) are not readable in
// Redis.
type Key [sha256.Size]byte

// NewKey hashes parts, each length-prefixed, so that ("a", "bc") and
// ("ab", "c") differ.
func NewKey(parts ...string) Key {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	var k Key
	h.Sum(k[:0])
	return k
}

// errCorrupt is a stored value Decode cannot read.
var errCorrupt = errors.New("stale: corrupt copy")

// maxContentType bounds the Content-Type a copy keeps, maxETag its ETag.
const (
	maxContentType = 255
	maxETag        = 255
)

// Encode writes c as Redis keeps it: the stored time (Unix nanoseconds,
// 8 bytes), the Content-Type's length (1 byte) and bytes, the ETag's
// length (1 byte) and bytes, then the body. A Content-Type longer than
// maxContentType is cut; an ETag longer than maxETag is dropped (a cut tag
// would match wrongly). The format's version is in Shared's keys.
func Encode(c Copy) []byte {
	ct, tag := c.ContentType, c.ETag
	if len(ct) > maxContentType {
		ct = ct[:maxContentType]
	}
	if len(tag) > maxETag {
		tag = ""
	}
	b := make([]byte, 0, 10+len(ct)+len(tag)+len(c.Body))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Stored.UnixNano()))
	b = append(b, byte(len(ct)))
	b = append(b, ct...)
	b = append(b, byte(len(tag)))
	b = append(b, tag...)
	return append(b, c.Body...)
}

// Decode reads what Encode wrote; anything shorter than its header is
// errCorrupt. The body aliases b.
func Decode(b []byte) (Copy, error) {
	if len(b) < 9 || len(b) < 10+int(b[8]) {
		return Copy{}, errCorrupt
	}
	n := 9 + int(b[8])
	if len(b) < n+1+int(b[n]) {
		return Copy{}, errCorrupt
	}
	m := n + 1 + int(b[n])
	return Copy{
		Stored:      time.Unix(0, int64(binary.BigEndian.Uint64(b))),
		ContentType: string(b[9:n]),
		ETag:        string(b[n+1 : m]),
		Body:        b[m:],
	}, nil
}
