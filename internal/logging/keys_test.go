package logging

import (
	"fmt"
	"slices"
	"testing"
)

// withKeys makes t the process's key table for the rest of the test.
func withKeys(t *testing.T, tbl *keyTable) {
	old := keys
	keys = tbl
	t.Cleanup(func() { keys = old })
}

// fullKeyTable is a key table whose every slot holds a key no record
// uses, so every key is decided anew.
func fullKeyTable(t *testing.T) *keyTable {
	tbl := new(keyTable)
	for i := 0; tbl.get(fmt.Sprint("unused-", i)) != nil || !full(tbl); i++ {
		if i > 100*keySlots {
			t.Fatal("the key table never filled")
		}
	}
	return tbl
}

func full(tbl *keyTable) bool {
	for i := range tbl {
		if tbl[i].Load() == nil {
			return false
		}
	}
	return true
}

// accessKeys are the keys of the processes' lines: slog's, the trace
// fields, the access lines' and the commonest others.
var accessKeys = []string{"time", "level", "msg", "service", "traceId", "spanId", "component",
	"method", "path", "route", "status", "code", "durationMs", "upstream", "client", "userAgent",
	"subject", "requestBytes", "responseBytes", "error", "clientGone", "err", "grpc.error", "addr", "version"}

// TestKeyTableKeepsAccessKeys: every key of the access lines is kept from
// its first use on, and what is kept is what isSecretKey and appendKey
// say.
func TestKeyTableKeepsAccessKeys(t *testing.T) {
	tbl := new(keyTable)
	names := append(slices.Clone(accessKeys), "Authorization", "x-signature", "token", "password", "nonce")
	for _, name := range names {
		tbl.get(name)
	}
	for _, name := range names {
		k := tbl.get(name)
		if k == nil {
			t.Errorf("get(%q) = nil after its first use, want it kept", name)
			continue
		}
		if k.name != name || k.secret != isSecretKey(name) || string(k.json) != string(appendKey(nil, name)) {
			t.Errorf("get(%q) = %q, secret %v, %s; want %q, secret %v, %s", name, k.name, k.secret, k.json,
				name, isSecretKey(name), appendKey(nil, name))
		}
	}
}

// TestKeyTableBounded: whatever keys come, the table answers only for the
// key asked, never grows, and allocates nothing once full.
func TestKeyTableBounded(t *testing.T) {
	tbl := new(keyTable)
	var names []string
	for k := range secretKeys {
		names = append(names, k, "X-"+k, "_"+k+"_")
	}
	for i := range 4 * keySlots {
		names = append(names, fmt.Sprint("k", i), fmt.Sprint("sig", i))
	}
	for _, name := range append(names, names...) {
		if k := tbl.get(name); k != nil && (k.name != name || k.secret != isSecretKey(name)) {
			t.Fatalf("get(%q) = %q, secret %v; want %q, secret %v", name, k.name, k.secret, name, isSecretKey(name))
		}
	}
	if !full(tbl) {
		t.Fatal("the table is not full")
	}
	if n := testing.AllocsPerRun(100, func() { tbl.get("a-key-never-seen") }); n != 0 {
		t.Errorf("get on a full table allocates %v times, want 0", n)
	}
	withKeys(t, tbl)
	for _, name := range []string{"Authorization", "idempotency_key", "method"} {
		if got := secretKey(name); got != isSecretKey(name) {
			t.Errorf("secretKey(%q) on a full table = %v, want %v", name, got, isSecretKey(name))
		}
	}
}
