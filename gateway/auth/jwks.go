package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"

	"github.com/portico-gateway/portico/internal/boundedfile"
)

// JWKS defaults; see JWKSOptions.
const (
	DefaultJWKSTimeout         = 5 * time.Second
	DefaultJWKSRefreshInterval = time.Hour
	DefaultJWKSMinRefresh      = 30 * time.Second
	// MaxJWKSBytes bounds a JWK Set document.
	MaxJWKSBytes = 1 << 20
)

// JWKSOptions configures a JWK Set fetched from a URL. Zero fields mean
// their defaults.
type JWKSOptions struct {
	// Client fetches the set; nil means a client with no other timeout
	// than Timeout.
	Client *http.Client
	// Timeout bounds one fetch. Zero means DefaultJWKSTimeout.
	Timeout time.Duration
	// RefreshInterval is how old the keys may grow before the next
	// verification refetches them (that request waits for the fetch, at
	// most Timeout). Zero means DefaultJWKSRefreshInterval.
	RefreshInterval time.Duration
	// MinRefresh is the least time between two fetches, whatever asks
	// for them (an unknown kid, an interval elapsed, a failed fetch).
	// Zero means DefaultJWKSMinRefresh.
	MinRefresh time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// JWKS holds the verification keys of a JWK Set (RFC 7517), read from a
// file once or fetched from a URL. It implements jwkset.Storage for
// keyfunc: an unknown kid triggers at most one fetch per MinRefresh;
// between fetches, and whenever the URL is unreachable, the keys last
// fetched keep working and an unknown kid fails closed. No goroutine runs
// in the background: fetches happen on the verifying request, bounded by
// Timeout, one at a time. Safe for concurrent use.
type JWKS struct {
	*jwkset.MemoryJWKSet
	url  string
	opts JWKSOptions

	fetching    sync.Mutex   // held during a fetch
	lastAttempt atomic.Int64 // Unix nanoseconds of the last fetch started; 0 = never
	lastSuccess atomic.Int64 // Unix nanoseconds of the last fetch that replaced the keys
}

var _ jwkset.Storage = (*JWKS)(nil)

// NewJWKSFile reads the JWK Set in the file at path.
func NewJWKSFile(path string) (*JWKS, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, fmt.Errorf("auth: jwks file: %w", err)
	}
	j := &JWKS{MemoryJWKSet: jwkset.NewMemoryStorage()}
	if err := j.load(context.Background(), data); err != nil {
		return nil, fmt.Errorf("auth: jwks file %s: %w", path, err)
	}
	return j, nil
}

// NewJWKSURL returns the JWK Set at url (http or https); nothing is
// fetched until the first verification needs a key.
func NewJWKSURL(url string, opts JWKSOptions) *JWKS {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultJWKSTimeout
	}
	if opts.RefreshInterval <= 0 {
		opts.RefreshInterval = DefaultJWKSRefreshInterval
	}
	if opts.MinRefresh <= 0 {
		opts.MinRefresh = DefaultJWKSMinRefresh
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	return &JWKS{MemoryJWKSet: jwkset.NewMemoryStorage(), url: url, opts: opts}
}

// KeyRead returns the key kid; for a URL set, an unknown kid or stale
// keys first refetch the set when MinRefresh allows. Only the first fetch
// is waited for by concurrent requests; later ones never hold up a
// request that another fetch is already serving: it uses the cached keys.
func (j *JWKS) KeyRead(ctx context.Context, kid string) (jwkset.JWK, error) {
	if j.url != "" && j.opts.Now().UnixNano()-j.lastSuccess.Load() >= int64(j.opts.RefreshInterval) {
		j.refresh(ctx)
	}
	k, err := j.MemoryJWKSet.KeyRead(ctx, kid)
	if errors.Is(err, jwkset.ErrKeyNotFound) && j.url != "" && j.refresh(ctx) {
		k, err = j.MemoryJWKSet.KeyRead(ctx, kid)
	}
	return k, err
}

// refresh fetches the set unless a fetch started less than MinRefresh
// ago; it reports whether it replaced the keys. A failed fetch keeps the
// keys.
func (j *JWKS) refresh(ctx context.Context) bool {
	if j.lastSuccess.Load() == 0 {
		j.fetching.Lock() // no keys yet: wait for the fetch in flight
	} else if !j.fetching.TryLock() {
		return false // another request is fetching; the cached keys serve
	}
	defer j.fetching.Unlock()
	now := j.opts.Now()
	if last := j.lastAttempt.Load(); last != 0 && now.UnixNano()-last < int64(j.opts.MinRefresh) {
		return false
	}
	j.lastAttempt.Store(now.UnixNano())
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.Timeout)
	defer cancel()
	data, err := j.fetch(ctx)
	if err == nil {
		err = j.load(ctx, data)
	}
	if err != nil {
		return false
	}
	j.lastSuccess.Store(now.UnixNano())
	return true
}

func (j *JWKS) fetch(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := j.opts.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks: status %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxJWKSBytes+1))
	if err == nil && len(data) > MaxJWKSBytes {
		err = fmt.Errorf("jwks: larger than %d bytes", MaxJWKSBytes)
	}
	return data, err
}

// load replaces the keys with the public signing keys of data. Keys of
// unsupported types, private or symmetric keys and keys for encryption
// are left out.
func (j *JWKS) load(ctx context.Context, data []byte) error {
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(data, &set); err != nil {
		return fmt.Errorf("not a JWK Set: %w", err)
	}
	var keys []jwkset.JWK
	for _, m := range set.Keys {
		if m.KID == "" || m.KTY == jwkset.KtyOct || (m.USE != "" && m.USE != jwkset.UseSig) || m.D != "" {
			continue
		}
		k, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
		if err != nil {
			continue
		}
		keys = append(keys, k)
	}
	return j.MemoryJWKSet.KeyReplaceAll(ctx, keys)
}

func readLimited(path string) ([]byte, error) {
	return boundedfile.Read(path, MaxJWKSBytes)
}
