package callmeta

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"
)

func TestValidIdempotencyKey(t *testing.T) {
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{"uuid", "7c0e6d1e-3b7a-4f7e-9d8c-1d2e3f4a5b6c", true},
		{"printable punctuation", "order:42/retry#1", true},
		{"max length", strings.Repeat("k", MaxIdempotencyKeyLen), true},
		{"empty", "", false},
		{"too long", strings.Repeat("k", MaxIdempotencyKeyLen+1), false},
		{"control character", "a\tb", false},
		{"newline", "a\nb", false},
		{"non-ascii", "clé", false},
		{"DEL", "a\x7f", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidIdempotencyKey(tt.key); got != tt.want {
				t.Errorf("ValidIdempotencyKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestPrincipalFromIncoming(t *testing.T) {
	tests := []struct {
		name    string
		md      metadata.MD
		want    Principal
		wantOK  bool
		seesAll bool
	}{
		{"customer", metadata.Pairs(SubjectKey, "alice", RoleKey, RoleCustomer), Principal{"alice", RoleCustomer}, true, false},
		{"admin sees all", metadata.Pairs(SubjectKey, "course-admin", RoleKey, RoleAdmin), Principal{"course-admin", RoleAdmin}, true, true},
		{"reader sees all", metadata.Pairs(SubjectKey, "r", RoleKey, RoleReader), Principal{"r", RoleReader}, true, true},
		{"no subject", metadata.Pairs(RoleKey, RoleAdmin), Principal{Role: RoleAdmin}, false, true},
		{"nothing", metadata.MD{}, Principal{}, false, false},
		{"blank subject", metadata.Pairs(SubjectKey, "  "), Principal{}, false, false},
		{"leading space is nobody", metadata.Pairs(SubjectKey, " alice", RoleKey, RoleCustomer), Principal{Role: RoleCustomer}, false, false},
		{"trailing space is nobody", metadata.Pairs(SubjectKey, "alice ", RoleKey, RoleCustomer), Principal{Role: RoleCustomer}, false, false},
		{"namespaced subject", metadata.Pairs(SubjectKey, "jwt:alice", RoleKey, RoleCustomer), Principal{"jwt:alice", RoleCustomer}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := PrincipalFromIncoming(metadata.NewIncomingContext(context.Background(), tt.md))
			if got != tt.want || ok != tt.wantOK || got.SeesAll() != tt.seesAll {
				t.Errorf("PrincipalFromIncoming() = %+v, %v (seesAll %v), want %+v, %v (%v)", got, ok, got.SeesAll(), tt.want, tt.wantOK, tt.seesAll)
			}
		})
	}
}

func TestOutgoingRoundTrip(t *testing.T) {
	ctx := WithIdempotencyKey(WithPrincipal(context.Background(), Principal{"bob", RoleCustomer}), "k1")
	if !HasOutgoingIdempotencyKey(ctx) {
		t.Error("HasOutgoingIdempotencyKey = false after WithIdempotencyKey")
	}
	if HasOutgoingIdempotencyKey(context.Background()) {
		t.Error("HasOutgoingIdempotencyKey = true on an empty context")
	}
	out, _ := metadata.FromOutgoingContext(ctx)
	in := metadata.NewIncomingContext(context.Background(), out)
	if p, ok := PrincipalFromIncoming(in); !ok || p != (Principal{"bob", RoleCustomer}) {
		t.Errorf("principal round trip = %+v, %v", p, ok)
	}
	if k := IdempotencyKeyFromIncoming(in); k != "k1" {
		t.Errorf("key round trip = %q", k)
	}
}
