package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"
	"time"
)

// Key bounds.
const (
	// MinSecretLen is the least secret length, in bytes: HMAC-SHA256's
	// block of security (RFC 2104 section 3).
	MinSecretLen = 32
	// MaxSecretLen bounds a secret, in bytes.
	MaxSecretLen = 64
	// MaxKeyIDLen bounds a key id.
	MaxKeyIDLen = 32
	// MaxKeys bounds a key ring: one signing key and the retiring ones.
	MaxKeys = 8
)

// Key is one shared signing secret.
type Key struct {
	// ID names the key inside every assertion it signs: 1-32 characters of
	// [A-Za-z0-9_-].
	ID string
	// Secret is 32-64 random bytes.
	Secret []byte
	// NotAfter ends the overlap window of a retiring key: verifiers accept
	// its assertions until then, and refuse them after. Zero means no end
	// (the signing key, or a key kept until an operator removes it).
	NotAfter time.Time
}

// GenerateKey returns a new key with a random 32-byte secret.
func GenerateKey(id string) Key {
	k := Key{ID: id, Secret: make([]byte, MinSecretLen)}
	_, _ = rand.Read(k.Secret) // crypto/rand.Read never fails (Go 1.24+).
	return k
}

// String formats k as one line of the keys format (see ParseKeys). It holds
// the secret: write it only where the secret may go.
func (k Key) String() string {
	s := k.ID + " " + base64.StdEncoding.EncodeToString(k.Secret)
	if !k.NotAfter.IsZero() {
		s += " " + k.NotAfter.UTC().Format(time.RFC3339)
	}
	return s
}

// Keys is a key ring: the first key signs, every key whose window is open
// verifies. Build it with NewKeys or ParseKeys; it is immutable and safe for
// concurrent use.
type Keys struct {
	keys []ringKey
}

type ringKey struct {
	Key
	macs sync.Map // audience -> *macPool
}

// NewKeys validates keys and returns the ring; keys[0] signs and must not
// have a NotAfter.
func NewKeys(keys ...Key) (*Keys, error) {
	if len(keys) == 0 || len(keys) > MaxKeys {
		return nil, fmt.Errorf("identity: want 1-%d keys, got %d", MaxKeys, len(keys))
	}
	if !keys[0].NotAfter.IsZero() {
		return nil, fmt.Errorf("identity: key %q signs (it comes first), so it cannot have a not-after time", keys[0].ID)
	}
	r := &Keys{keys: make([]ringKey, len(keys))}
	seen := map[string]bool{}
	for i, k := range keys {
		if !validKeyID(k.ID) {
			return nil, fmt.Errorf("identity: key id %q: want 1-%d characters of [A-Za-z0-9_-]", k.ID, MaxKeyIDLen)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("identity: key id %q appears twice", k.ID)
		}
		seen[k.ID] = true
		if len(k.Secret) < MinSecretLen || len(k.Secret) > MaxSecretLen {
			return nil, fmt.Errorf("identity: key %q: secret is %d bytes, want %d-%d", k.ID, len(k.Secret), MinSecretLen, MaxSecretLen)
		}
		k.Secret = append([]byte(nil), k.Secret...)
		r.keys[i].Key = k
	}
	return r, nil
}

// ParseKeys reads a key ring from text: one key per entry, entries on
// separate lines or separated by ';', each "ID SECRET [NOT-AFTER]" with the
// secret in base64 (standard or URL alphabet, padded or not) and NOT-AFTER
// in RFC 3339. The first entry signs. Blank entries and lines starting with
// '#' (comments, which may hold ';') are skipped. Errors never quote a secret.
func ParseKeys(text string) (*Keys, error) {
	if len(text) > 64<<10 {
		return nil, errors.New("identity: keys text is larger than 64 KiB")
	}
	var keys []Key
	for n, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for entry := range strings.SplitSeq(line, ";") {
			if entry = strings.TrimSpace(entry); entry == "" {
				continue
			}
			k, err := parseKey(entry)
			if err != nil {
				return nil, fmt.Errorf("identity: keys line %d: %w", n+1, err)
			}
			if len(keys) == MaxKeys {
				return nil, fmt.Errorf("identity: more than %d keys", MaxKeys)
			}
			keys = append(keys, k)
		}
	}
	return NewKeys(keys...)
}

func parseKey(entry string) (Key, error) {
	f := strings.Fields(entry)
	if len(f) < 2 || len(f) > 3 {
		return Key{}, errors.New(`want "ID SECRET [NOT-AFTER]"`)
	}
	k := Key{ID: f[0]}
	var err error
	if k.Secret, err = decodeSecret(f[1]); err != nil {
		return Key{}, fmt.Errorf("key %q: secret is not base64", k.ID)
	}
	if len(f) == 3 {
		if k.NotAfter, err = time.Parse(time.RFC3339, f[2]); err != nil {
			return Key{}, fmt.Errorf("key %q: not-after %q is not RFC 3339", k.ID, f[2])
		}
	}
	return k, nil
}

func decodeSecret(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

func validKeyID(id string) bool {
	if id == "" || len(id) > MaxKeyIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// String lists the ring in the keys format, signing key first.
func (r *Keys) String() string {
	lines := make([]string, len(r.keys))
	for i := range r.keys {
		lines[i] = r.keys[i].Key.String()
	}
	return strings.Join(lines, "\n") + "\n"
}

// IDs returns the key ids, signing key first (for logs: never the secrets).
func (r *Keys) IDs() []string {
	ids := make([]string, len(r.keys))
	for i := range r.keys {
		ids[i] = r.keys[i].ID
	}
	return ids
}

// Derive returns HMAC-SHA256(the signing key's secret, label): a secret
// for another use (page tokens) that every process holding the ring
// derives alike. It changes when the signing key does.
func (r *Keys) Derive(label string) []byte {
	m := hmac.New(sha256.New, r.signer().Secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// DeriveEach returns HMAC-SHA256(secret, label) for every key of the
// ring, the signing key's first: a secret for another use that a process
// signs with the first and verifies with any, so what one process signed
// just before a rotation still verifies at a process that has rotated.
func (r *Keys) DeriveEach(label string) [][]byte {
	out := make([][]byte, len(r.keys))
	for i := range r.keys {
		m := hmac.New(sha256.New, r.keys[i].Secret)
		m.Write([]byte(label))
		out[i] = m.Sum(nil)
	}
	return out
}

// signer returns the signing key.
func (r *Keys) signer() *ringKey { return &r.keys[0] }

// verifier returns the key named id if its window is open at now.
func (r *Keys) verifier(id string, now time.Time) (*ringKey, error) {
	for i := range r.keys {
		k := &r.keys[i]
		if k.ID != id {
			continue
		}
		if !k.NotAfter.IsZero() && !now.Before(k.NotAfter) {
			return nil, ErrKeyRetired
		}
		return k, nil
	}
	return nil, ErrUnknownKey
}

// mac returns the pool of HMACs keyed for audience: HMAC-SHA256 under
// K_aud = HMAC-SHA256(secret, "portico-identity-v1 audience " + aud), so an
// assertion minted for one service is worthless at another even though
// they share the secret.
func (k *ringKey) mac(aud string) *macPool {
	if p, ok := k.macs.Load(aud); ok {
		return p.(*macPool)
	}
	d := hmac.New(sha256.New, k.Secret)
	d.Write([]byte("portico-identity-v1 audience "))
	d.Write([]byte(aud))
	sub := d.Sum(nil)
	p := &macPool{}
	p.New = func() any { return hmac.New(sha256.New, sub) }
	actual, _ := k.macs.LoadOrStore(aud, p)
	return actual.(*macPool)
}

// macPool reuses keyed HMAC states: hmac.New costs two block hashes and
// allocations; Reset restores the keyed state for free.
type macPool struct{ sync.Pool }

// sum appends the MAC of msg to dst.
func (p *macPool) sum(dst []byte, msg string) []byte {
	h := p.Get().(hash.Hash)
	h.Reset()
	_, _ = h.Write([]byte(msg))
	dst = h.Sum(dst)
	p.Put(h)
	return dst
}
