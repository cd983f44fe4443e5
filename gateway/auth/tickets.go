package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Stream tickets let a browser's EventSource, which cannot send an
// Authorization header, open one stream as an authenticated caller.
const (
	// TicketsPath is where the edge issues stream tickets: an
	// authenticated POST {"path": "<the stream's path>"}.
	TicketsPath = "/api/stream-tickets"
	// TicketParam is the query parameter that carries a stream ticket.
	TicketParam = "ticket"
	// ViaTicket is the Principal.Via of a caller a stream ticket
	// authenticated.
	ViaTicket = "stream_ticket"
	// DefaultTicketTTL is how long a ticket can be redeemed after it is
	// issued.
	DefaultTicketTTL = 30 * time.Second
	// MaxTicketTTL bounds Tickets.TTL.
	MaxTicketTTL = 5 * time.Minute
	// maxTicketBytes bounds a ticket read from a query: an issued one is
	// about 300 bytes, more with many roles.
	maxTicketBytes = 2 << 10
	ticketPrefix   = "pst1."
)

// Tickets issues and redeems stream tickets: opaque, HMAC-SHA256-signed
// strings that carry a principal, the one path they open, an expiry and a
// random id. Redeem accepts a ticket once (its id is claimed in Nonces, so
// a second use is ErrReplayed), only before it expires (ErrExpired) and
// only for its path (ErrInvalidCredentials). Every process with the same
// Keys and a shared Nonces (Redis) accepts the tickets of any other. The
// zero value is not usable: Keys and Nonces must be set. Safe for
// concurrent use; do not change its fields once in use.
type Tickets struct {
	// Keys verify tickets, and the first signs them; each at least 32
	// bytes. More than one lets tickets signed before a key rotation
	// still verify.
	Keys [][]byte
	// Nonces makes each ticket single-use.
	Nonces NonceStore
	// TTL is a ticket's life; zero means DefaultTicketTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// ticket is a ticket's signed payload.
type ticket struct {
	Subject string   `json:"sub"`
	Roles   []string `json:"roles,omitempty"`
	Tenant  string   `json:"ten,omitempty"`
	Plan    string   `json:"plan,omitempty"`
	Path    string   `json:"path"`
	Issued  int64    `json:"iat"` // unix milliseconds
	Expires int64    `json:"exp"` // unix milliseconds
	ID      string   `json:"id"`
}

func (t *Tickets) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *Tickets) ttl() time.Duration {
	if t.TTL > 0 {
		return min(t.TTL, MaxTicketTTL)
	}
	return DefaultTicketTTL
}

// Issue returns a ticket that opens path (as sent: escaped, without the
// query) as p, and when it expires.
func (t *Tickets) Issue(p Principal, path string) (string, time.Time, error) {
	if len(t.Keys) == 0 || len(t.Keys[0]) < 32 {
		return "", time.Time{}, errors.New("auth: tickets: no signing key of 32 bytes or more")
	}
	var id [16]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	now := t.now()
	exp := now.Add(t.ttl())
	payload, err := json.Marshal(ticket{Subject: p.Subject, Roles: p.Roles, Tenant: p.Tenant, Plan: p.Plan,
		Path: path, Issued: now.UnixMilli(), Expires: exp.UnixMilli(), ID: base64.RawURLEncoding.EncodeToString(id[:])})
	if err != nil {
		return "", time.Time{}, err
	}
	body := ticketPrefix + base64.RawURLEncoding.EncodeToString(payload)
	return body + "." + base64.RawURLEncoding.EncodeToString(mac(t.Keys[0], body)), exp, nil
}

func mac(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// verifies reports whether sig is body's MAC under one of the keys.
func (t *Tickets) verifies(body string, sig []byte) bool {
	for _, k := range t.Keys {
		if len(k) >= 32 && hmac.Equal(sig, mac(k, body)) {
			return true
		}
	}
	return false
}

// Redeem returns the principal of tk, a ticket for path, and uses it up.
func (t *Tickets) Redeem(ctx context.Context, tk, path string) (Principal, error) {
	invalid := fail(ErrInvalidCredentials, "The stream ticket is not valid; ask POST /api/stream-tickets for a new one.")
	if len(tk) > maxTicketBytes || !strings.HasPrefix(tk, ticketPrefix) {
		return Principal{}, invalid
	}
	body, sig, ok := strings.Cut(tk[len(ticketPrefix):], ".")
	sum, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !t.verifies(ticketPrefix+body, sum) {
		return Principal{}, invalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	var c ticket
	if err != nil || json.Unmarshal(raw, &c) != nil || c.ID == "" || c.Subject == "" {
		return Principal{}, invalid
	}
	now := t.now()
	if now.UnixMilli() >= c.Expires {
		return Principal{}, fail(ErrExpired, "The stream ticket has expired; ask POST /api/stream-tickets for a new one.")
	}
	if c.Path != path {
		return Principal{}, fail(ErrInvalidCredentials, "The stream ticket opens another path.")
	}
	if hz, ok := t.Nonces.(NonceHorizon); ok {
		// A store in memory forgot the tickets used before it started.
		if since := hz.RemembersSince(); !since.IsZero() && c.Issued < since.UnixMilli() {
			return Principal{}, fail(ErrExpired, "The stream ticket was issued before the gateway restarted; ask for a new one.")
		}
	}
	fresh, err := t.Nonces.Claim(ctx, "ticket\x00"+c.ID, time.Duration(c.Expires-now.UnixMilli()+1000)*time.Millisecond)
	if err != nil {
		return Principal{}, &Failure{Err: ErrUnavailable, Detail: "The gateway cannot check stream tickets right now; retry shortly.", Cause: err}
	}
	if !fresh {
		return Principal{}, fail(ErrReplayed, "The stream ticket was used before; each opens one stream.")
	}
	return NewPrincipal(c.Subject, c.Roles, c.Tenant, c.Plan, ViaTicket), nil
}

// HasTicket reports whether a raw query carries a stream ticket: such a
// request is for Tickets.Authenticate, not for the other authenticators.
func HasTicket(raw string) bool {
	tk, one := ticketOf(raw)
	return tk != "" || !one
}

// Authenticate returns the principal of r's stream ticket (a request
// HasTicket said has one) and uses the ticket up. A ticket beside other
// credentials, twice in the query, or on a method other than GET or HEAD
// is ErrMalformed. A nil *Tickets accepts no ticket.
func (t *Tickets) Authenticate(r *http.Request) (Principal, error) {
	tk, one := ticketOf(r.URL.RawQuery)
	switch {
	case !one:
		return Principal{}, fail(ErrMalformed, "Send one stream ticket.")
	case len(r.Header.Values("Authorization")) > 0 || hasSignatureHeaders(r.Header):
		return Principal{}, fail(ErrMalformed, "Send either a stream ticket or other credentials, not both.")
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		return Principal{}, fail(ErrMalformed, "A stream ticket opens a stream (GET); send other requests with Authorization.")
	case t == nil:
		return Principal{}, fail(ErrInvalidCredentials, "Stream tickets are not accepted here.")
	}
	return t.Redeem(r.Context(), tk, r.URL.EscapedPath())
}

// ticketOf returns the ticket in a raw query ("" when it has none), and
// false when the query names more than one or cannot be read. Only the
// parameter named exactly "ticket" counts: StripTicket removes that one.
func ticketOf(raw string) (string, bool) {
	if !strings.Contains(raw, TicketParam+"=") {
		return "", true
	}
	var tk string
	n := 0
	for pair := range strings.SplitSeq(raw, "&") {
		name, v, _ := strings.Cut(pair, "=")
		if name != TicketParam {
			continue
		}
		var err error
		if tk, err = url.QueryUnescape(v); err != nil {
			return "", false
		}
		n++
	}
	return tk, n <= 1
}

// StripTicket returns the raw query without its ticket parameter: what the
// route binds once the ticket has authenticated the request.
func StripTicket(raw string) string {
	if !strings.Contains(raw, TicketParam+"=") {
		return raw
	}
	var b strings.Builder
	for pair := range strings.SplitSeq(raw, "&") {
		if name, _, _ := strings.Cut(pair, "="); name == TicketParam || pair == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(pair)
	}
	return b.String()
}
