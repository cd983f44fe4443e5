package stale

import (
	"bytes"
	"testing"
	"time"
)

func TestEncodeDecode(t *testing.T) {
	tests := []Copy{
		{Stored: time.Unix(0, 1712345678901234567), ContentType: "application/json", ETag: `"Xq3v0p8lJ1cWm2Rk"`, Body: []byte(`{"sku":"A"}`)},
		{Stored: time.Unix(5, 0), ContentType: "", Body: nil},
	}
	for _, c := range tests {
		got, err := Decode(Encode(c))
		if err != nil || !got.Stored.Equal(c.Stored) || got.ContentType != c.ContentType || got.ETag != c.ETag || !bytes.Equal(got.Body, c.Body) {
			t.Errorf("Decode(Encode(%+v)) = %+v, %v", c, got, err)
		}
	}
	for _, b := range [][]byte{nil, {1, 2, 3}, append(make([]byte, 8), 5, 'a'), append(make([]byte, 8), 1, 'a'), append(make([]byte, 8), 0, 3, 'a')} {
		if _, err := Decode(b); err == nil {
			t.Errorf("Decode(%q) = nil error, want corrupt", b)
		}
	}
}

// FuzzDecode: whatever Redis holds under a key, Decode never panics, and
// what it reads encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(Copy{Stored: time.Unix(9, 9), ContentType: "application/json", Body: []byte("{}")}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		if got := Encode(c); !bytes.Equal(got, b) {
			t.Errorf("Encode(Decode(%q)) = %q", b, got)
		}
	})
}
