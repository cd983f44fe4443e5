package console

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Cookie is the name of the console's session cookie.
const Cookie = "portico_console"

// Defaults of Sessions.
const (
	DefaultMaxSessions = 256
	DefaultSessionTTL  = 8 * time.Hour
)

// Sessions are the console's sign-in sessions, in memory only (a restart
// signs everyone out). The zero value works. Safe for concurrent use.
type Sessions struct {
	// Max bounds the sessions kept; zero or negative means
	// DefaultMaxSessions. Creating one more ends the oldest.
	Max int
	// TTL is a session's life from its creation; zero or negative means
	// DefaultSessionTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu sync.Mutex
	// byKey holds each session under the SHA-256 of its id, so the ids
	// themselves (the cookies' values) are not kept.
	byKey map[[32]byte]Session
}

// Session is one signed-in console: whom it is for and the credential it
// was made with, which the caller authenticates again on every use (so a
// token that a config reload removed ends the session at once).
type Session struct {
	Credential       string // the Authorization header value; never logged (String, LogValue)
	Subject          string
	Created, Expires time.Time
}

// String shows the session without its credential.
func (s Session) String() string {
	return "console session of " + s.Subject + " until " + s.Expires.UTC().Format(time.RFC3339)
}

// LogValue logs the session without its credential.
func (s Session) LogValue() slog.Value {
	return slog.GroupValue(slog.String("subject", s.Subject), slog.Time("expires", s.Expires))
}

func (ss *Sessions) now() time.Time {
	if ss.Now != nil {
		return ss.Now()
	}
	return time.Now()
}

// ttl is TTL or its default.
func (ss *Sessions) ttl() time.Duration {
	if ss.TTL > 0 {
		return ss.TTL
	}
	return DefaultSessionTTL
}

func key(id string) [32]byte { return sha256.Sum256([]byte(id)) }

// Create starts a session for subject, made with credential, and returns
// its id: 256 random bits, base64url. It first drops the expired
// sessions, then the oldest while Max are kept.
func (ss *Sessions) Create(credential, subject string) (id string, s Session) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	id = base64.RawURLEncoding.EncodeToString(b[:])
	now := ss.now()
	s = Session{Credential: credential, Subject: subject, Created: now, Expires: now.Add(ss.ttl())}
	max := ss.Max
	if max <= 0 {
		max = DefaultMaxSessions
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byKey == nil {
		ss.byKey = map[[32]byte]Session{}
	}
	ss.sweep(now)
	for len(ss.byKey) >= max {
		ss.evictOldest()
	}
	ss.byKey[key(id)] = s
	return id, s
}

// sweep drops the expired sessions; under mu. At most Max of them, so a
// scan per Create is cheap.
func (ss *Sessions) sweep(now time.Time) {
	for k, s := range ss.byKey {
		if !now.Before(s.Expires) {
			delete(ss.byKey, k)
		}
	}
}

// evictOldest drops the session created first; under mu.
func (ss *Sessions) evictOldest() {
	var oldest [32]byte
	var at time.Time
	first := true
	for k, s := range ss.byKey {
		if first || s.Created.Before(at) {
			oldest, at, first = k, s.Created, false
		}
	}
	delete(ss.byKey, oldest)
}

// Get returns the live session of id; an expired one is dropped and not
// returned.
func (ss *Sessions) Get(id string) (Session, bool) {
	k := key(id)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byKey[k]
	if ok && !ss.now().Before(s.Expires) {
		delete(ss.byKey, k)
		ok = false
	}
	return s, ok
}

// Delete ends the session of id, if there is one.
func (ss *Sessions) Delete(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.byKey, key(id))
}

// Len is how many sessions are kept, expired ones not yet dropped
// included.
func (ss *Sessions) Len() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.byKey)
}

// SetCookie sets the cookie of session id: for the whole listener, out
// of scripts' reach, never sent cross-site, for the session's life, and
// over TLS only when the listener is TLS.
func SetCookie(w http.ResponseWriter, id string, s Session, secure bool) {
	http.SetCookie(w, &http.Cookie{Name: Cookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		MaxAge: int(s.Expires.Sub(s.Created) / time.Second), Secure: secure})
}

// ClearCookie tells the browser to drop the session cookie.
func ClearCookie(w http.ResponseWriter, secure bool) {
	http.SetCookie(w, &http.Cookie{Name: Cookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		MaxAge: -1, Secure: secure})
}
