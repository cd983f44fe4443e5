package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/portico-gateway/portico/interceptors/clock"
)

var epoch = time.Date(2026, 8, 18, 3, 0, 0, 0, time.UTC)

func TestFakeAdvanceFiresDueTimers(t *testing.T) {
	f := clock.NewFake(epoch)
	short, long := f.NewTimer(time.Second), f.NewTimer(time.Minute)
	f.Advance(time.Second)
	select {
	case got := <-short.C():
		if !got.Equal(epoch.Add(time.Second)) {
			t.Errorf("short fired at %v, want %v", got, epoch.Add(time.Second))
		}
	default:
		t.Fatal("short timer did not fire after Advance(1s)")
	}
	select {
	case <-long.C():
		t.Fatal("long timer fired early")
	default:
	}
	if !long.Stop() {
		t.Error("Stop() = false for a pending timer, want true")
	}
	if n := f.Timers(); n != 0 {
		t.Errorf("Timers() = %d after Stop, want 0", n)
	}
}

func TestFakeAutoAdvance(t *testing.T) {
	f := clock.NewFake(epoch)
	f.SetAutoAdvance(true)
	<-f.NewTimer(250 * time.Millisecond).C()
	if got, want := f.Now(), epoch.Add(250*time.Millisecond); !got.Equal(want) {
		t.Errorf("Now() = %v, want %v", got, want)
	}
}

func TestFakeWaitForTimers(t *testing.T) {
	f := clock.NewFake(epoch)
	go func() { f.NewTimer(time.Second) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !f.WaitForTimers(ctx, 1) {
		t.Fatal("WaitForTimers(1) = false, want true")
	}
}

func TestRealTimer(t *testing.T) {
	c := clock.Real()
	tm := c.NewTimer(time.Hour)
	if !tm.Stop() {
		t.Error("Stop() = false for a fresh one-hour timer")
	}
	if c.Now().IsZero() {
		t.Error("Now() is zero")
	}
}
