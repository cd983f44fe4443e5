package console

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSessions: a session lasts TTL from its creation; Max are kept, one
// more ending the oldest; Create drops expired ones; Delete ends one.
func TestSessions(t *testing.T) {
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	ss := &Sessions{Max: 3, TTL: time.Hour, Now: func() time.Time { return now }}
	var ids []string
	for range 4 {
		id, s := ss.Create("Bearer tok", "admin")
		if len(id) != 43 || s.Expires.Sub(s.Created) != time.Hour {
			t.Fatalf("Create = %q %v, want a 256-bit base64url id and an hour", id, s)
		}
		ids = append(ids, id)
		now = now.Add(time.Minute)
	}
	for i, want := range []bool{false, true, true, true} {
		if _, ok := ss.Get(ids[i]); ok != want {
			t.Errorf("session %d kept %v, want %v (Max 3)", i, ok, want)
		}
	}
	ss.Delete(ids[1])
	if _, ok := ss.Get(ids[1]); ok || ss.Len() != 2 {
		t.Errorf("after Delete: kept %v, %d sessions; want gone, 2", ok, ss.Len())
	}
	now = now.Add(time.Hour - 2*time.Minute) // ids[2] (made at +2 min) is an hour old, ids[3] a minute less
	if _, ok := ss.Get(ids[2]); ok {
		t.Errorf("an hour-old session is still live")
	}
	if _, ok := ss.Get(ids[3]); !ok {
		t.Errorf("a 59-minute-old session ended")
	}
	now = now.Add(time.Hour)
	ss.Create("Bearer tok", "admin")
	if ss.Len() != 1 {
		t.Errorf("Create left %d sessions, want the expired ones swept", ss.Len())
	}
}

// TestSessionsDefaults: the zero value keeps DefaultMaxSessions for
// DefaultSessionTTL.
func TestSessionsDefaults(t *testing.T) {
	var ss Sessions
	first, s := ss.Create("c", "s")
	if s.Expires.Sub(s.Created) != DefaultSessionTTL {
		t.Errorf("TTL %v, want %v", s.Expires.Sub(s.Created), DefaultSessionTTL)
	}
	for range DefaultMaxSessions {
		ss.Create("c", "s")
	}
	if _, ok := ss.Get(first); ok || ss.Len() != DefaultMaxSessions {
		t.Errorf("%d sessions, first kept %v; want %d, the first gone", ss.Len(), ok, DefaultMaxSessions)
	}
}

// TestSessionHidesCredential: printing or logging a session never shows
// its credential.
func TestSessionHidesCredential(t *testing.T) {
	var ss Sessions
	_, s := ss.Create("Bearer secret-token-1234", "course-admin")
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "session", s)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%+v", s), buf.String()} {
		if strings.Contains(out, "secret-token") || !strings.Contains(out, "course-admin") {
			t.Errorf("%q shows the credential or lacks the subject", out)
		}
	}
}

// TestCookies: the session cookie's attributes, and its clearing.
func TestCookies(t *testing.T) {
	var ss Sessions
	id, s := ss.Create("c", "s")
	for _, secure := range []bool{false, true} {
		rec := httptest.NewRecorder()
		SetCookie(rec, id, s, secure)
		want := Cookie + "=" + id + "; Path=/; Max-Age=28800; HttpOnly; SameSite=Strict"
		if secure {
			want = Cookie + "=" + id + "; Path=/; Max-Age=28800; HttpOnly; Secure; SameSite=Strict"
		}
		if got := rec.Header().Get("Set-Cookie"); got != want {
			t.Errorf("Set-Cookie %q, want %q", got, want)
		}
	}
	rec := httptest.NewRecorder()
	ClearCookie(rec, false)
	if got := rec.Header().Get("Set-Cookie"); got != Cookie+"=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" {
		t.Errorf("cleared Set-Cookie %q", got)
	}
}
