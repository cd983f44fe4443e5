package testproc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestBufferWaitFor(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
		ok     bool
	}{
		{"already there", []string{"a\n"}, "a\n", true},
		{"after several writes", []string{"a", "b", "c"}, "abc", true},
		{"never", []string{"a", "b"}, "z", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var b Buffer
				var wg sync.WaitGroup
				wg.Go(func() {
					for _, w := range tt.writes {
						synctest.Wait() // the waiter is blocked before each write
						fmt.Fprint(&b, w)
					}
				})
				got := b.WaitFor(context.Background(), time.Minute, func(s string) bool { return strings.Contains(s, tt.want) })
				wg.Wait()
				if got != tt.ok {
					t.Errorf("WaitFor(%q) after %q = %v, want %v", tt.want, tt.writes, got, tt.ok)
				}
				if b.String() != strings.Join(tt.writes, "") {
					t.Errorf("String() = %q", b.String())
				}
			})
		})
	}
}
