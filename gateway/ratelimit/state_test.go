package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/redistest"
)

// refuseTwice bans caller under a 1-per-minute quota and a ban policy of
// one refusal: one admitted request, one refused, one that bans.
func refuseTwice(t *testing.T, s Store, caller string) {
	t.Helper()
	req := &Request{Caller: caller, Quotas: []Quota{{Key: "caller:" + caller, Limit: Limit{Rate: 1, Period: time.Minute}}}}
	for range 3 {
		if _, err := s.Allow(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
}

var oneRefusal = BanPolicy{Threshold: 1, Window: time.Minute, Duration: time.Hour}

func TestLocalListsBans(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l, err := NewLocal(WithBans(oneRefusal), WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	if bans, more := l.Bans(10); len(bans) != 0 || more {
		t.Fatalf("Bans() of a new store = %v, %v; want none", bans, more)
	}
	refuseTwice(t, l, "subject:alice")
	l.Ban("subject:bob", time.Minute)
	bans, more := l.Bans(10)
	want := []Ban{{"subject:bob", now.Add(time.Minute)}, {"subject:alice", now.Add(time.Hour)}}
	if len(bans) != 2 || more || bans[0] != want[0] || bans[1] != want[1] {
		t.Errorf("Bans(10) = %v, %v; want %v, false", bans, more, want)
	}
	if bans, more := l.Bans(1); len(bans) != 1 || !more {
		t.Errorf("Bans(1) = %v, %v; want one and more", bans, more)
	}
	now = now.Add(2 * time.Minute) // bob's ban ended
	if bans, _ := l.Bans(10); len(bans) != 1 || bans[0].Caller != "subject:alice" {
		t.Errorf("Bans after 2m = %v, want alice's alone", bans)
	}
}

func TestRedisListsBans(t *testing.T) {
	_, client, prefix := redistest.Shared(t)
	s, err := NewRedis(client, prefix+"a*[", oneRefusal) // glob characters in the prefix are quoted
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewRedis(client, prefix+"ab", oneRefusal)
	refuseTwice(t, s, "subject:alice")
	refuseTwice(t, other, "subject:mallory") // another prefix: not listed
	before := time.Now()
	bans, more, err := s.Bans(context.Background(), client, 10)
	if err != nil || len(bans) != 1 || more || bans[0].Caller != "subject:alice" {
		t.Fatalf("Bans(10) = %v, %v, %v; want alice's alone", bans, more, err)
	}
	if left := bans[0].Until.Sub(before); left <= 59*time.Minute || left > time.Hour+time.Second {
		t.Errorf("alice's ban ends in %s, want about 1h", left)
	}
	refuseTwice(t, s, "subject:bob")
	if bans, more, err := s.Bans(context.Background(), client, 1); err != nil || len(bans) != 1 || !more {
		t.Errorf("Bans(1) = %v, %v, %v; want one and more", bans, more, err)
	}
}
