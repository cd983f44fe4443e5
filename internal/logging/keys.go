package logging

import "sync/atomic"

// key is what a record needs of an attribute key, decided once per key:
// whether its value is a secret (isSecretKey), and its JSON encoding
// ,"key": as Direct writes it.
type key struct {
	name   string
	secret bool
	json   []byte
}

// Attribute keys are nearly all constants of the code (method, status,
// durationMs, ...), and every attribute of every record has its key
// checked against secretKeys (normalised, then looked up), so the
// decisions are kept in a keyTable. It is bounded and allocates only while
// it fills: a key takes the first free slot of the keyProbes from its
// hash on, for good; a key that finds none is decided anew each time, as
// before the table.
const (
	keySlots      = 256
	keyProbes     = 4
	maxCachedName = 64 // longer keys are not kept
)

type keyTable [keySlots]atomic.Pointer[key]

// keys is the process's table (a pointer, for tests to swap).
var keys = new(keyTable)

// keySlot is name's first slot: a multiplicative hash of its length and
// its first and last eight (or four) bytes, cheap for the short names it
// serves.
func keySlot(name string) int {
	n := len(name)
	var h uint64
	switch {
	case n >= 8:
		h = le64(name) ^ le64(name[n-8:])*0x9e3779b97f4a7c15
	case n >= 4:
		h = uint64(le32(name)) | uint64(le32(name[n-4:]))<<32
	default:
		for i := range n {
			h |= uint64(name[i]) << (8 * i)
		}
	}
	h = (h ^ uint64(n)) * 0xbf58476d1ce4e5b9
	return int(h >> 56) // the top 8 bits: keySlots is 256
}

// le64 is s's first eight bytes, little-endian (one load).
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// le32 is s's first four bytes, little-endian (one load).
func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// get returns name's key, storing it in a free slot if it is not there
// yet; nil if there is none.
func (t *keyTable) get(name string) *key {
	i := keySlot(name)
	for p := range keyProbes {
		slot := &t[(i+p)%keySlots]
		k := slot.Load()
		if k == nil {
			if len(name) > maxCachedName {
				return nil
			}
			k = &key{name: name, secret: isSecretKey(name), json: appendKey(nil, name)}
			if slot.CompareAndSwap(nil, k) {
				return k
			}
			return nil // another key took it just now
		}
		if k.name == name {
			return k
		}
	}
	return nil
}

// cachedKey returns name's key from the process's table, or nil.
func cachedKey(name string) *key { return keys.get(name) }

// secretKey is isSecretKey(name), from the table when it is there.
func secretKey(name string) bool {
	if k := cachedKey(name); k != nil {
		return k.secret
	}
	return isSecretKey(name)
}

// appendKey appends ,"name": as the JSON handler writes an attribute's key.
func appendKey(b []byte, name string) []byte {
	b = append(b, ',')
	b = appendJSONString(b, name)
	return append(b, ':')
}
