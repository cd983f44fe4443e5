package gateway

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/stale"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
)

// keyBefore is a request's copy key as edges worked it out before the
// call's message was captured (startCapture bound path and query a second
// time with bindRequest and marshalled that): copies in Redis are shared
// by edges of both versions only while the keys are the same bytes. ok is
// false when that edge kept no copy for the request.
func keyBefore(t *testing.T, h *harness, method, target, token string) (_ stale.Key, ok bool) {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	r.Header.Set("Authorization", "Bearer "+token)
	sn := h.srv.snap.Load()
	rt, _ := sn.table.Match(r.Method, r.URL.Path)
	if rt == nil {
		t.Fatalf("%s %s matches no route", method, target)
	}
	ep := sn.endpoints[rt]
	p, err := sn.auth.Authenticate(r)
	if err != nil {
		t.Fatalf("authenticating %s: %v", token, err)
	}
	p = sn.policy.Grant(p, rt)
	query, prob := checkQuery(ep, r.URL.RawQuery)
	if prob != nil {
		return stale.Key{}, false
	}
	msg, ok := bindRequest(ep, r.URL.Path, query)
	if !ok {
		return stale.Key{}, false
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return stale.Key{}, false
	}
	if ep.stale.public {
		return stale.NewKey(scopePublic, ep.Key(), string(b), p.Role), true
	}
	return stale.NewKey(scopeCaller, ep.Key(), string(b), p.Role, p.Tenant, p.Subject), true
}

// TestStaleKeyEquivalence: for every spelling of a GET (and its HEAD), on
// the generated path and the descriptor path, the copy the edge keeps is
// under the key edges made before it captured the call's message
// (keyBefore), and a copy under that key is what a failing request is
// answered: a fleet of old and new edges shares copies in Redis. A request
// grpc-gateway refuses (400) has no key either way.
func TestStaleKeyEquivalence(t *testing.T) {
	tests := []struct {
		method, target, token string
		keyed                 bool // the request has a key (it reaches the upstream)
	}{
		{"GET", "/api/inventory/kb-1", aliceToken, true},
		{"GET", "/api/inventory/%6Bb-1", aliceToken, true},
		{"GET", "/api/inventory/%6b%62%2D1", bobToken, true},
		{"GET", "/api/inventory/kb-1?sku=other", aliceToken, false}, // a path variable in the query: 400
		{"GET", "/api/inventory/A%20B", aliceToken, true},
		{"GET", "/api/inventory/a%252Fb", aliceToken, true}, // an escaped escape: the variable is "a%2Fb"
		{"GET", "/api/inventory/%C3%A9t%C3%A9", readerToken, true},
		{"GET", "/api/inventory", aliceToken, true},
		{"GET", "/api/inventory?", aliceToken, true},
		{"GET", "/api/inventory?pageSize=2&pageToken=t", aliceToken, true},
		{"GET", "/api/inventory?pageToken=t&pageSize=2", aliceToken, true},
		{"GET", "/api/inventory?page%54oken=%74&pageSize=%32", aliceToken, true},
		{"GET", "/api/inventory?pageSize=2&pageToken=t&", aliceToken, true},
		{"GET", "/api/inventory?page_size=2&page_token=t", aliceToken, false}, // proto names: 400
		{"GET", "/api/inventory?pageToken=a+b", aliceToken, true},
		{"GET", "/api/inventory?pageToken=a%2Bb%26c", aliceToken, true},
		{"GET", "/api/inventory?pageSize=0", aliceToken, true},
		{"GET", "/api/inventory?pageToken=", aliceToken, true},
		{"GET", "/api/inventory?pageSize=0&pageToken=", aliceToken, true},
		{"GET", "/api/inventory?pageSize=-0", aliceToken, true},
		{"GET", "/api/inventory?pageSize=007", aliceToken, true},
		{"GET", "/api/inventory?pageSize=2&pageSize=3", aliceToken, false}, // repeated scalar: 400
		{"GET", "/api/inventory?pageSize=x", aliceToken, false},
		{"GET", "/api/inventory?nope=1", aliceToken, false},
		{"GET", "/api/orders/ord-1", aliceToken, true}, // per-caller: subject and tenant in the key
		{"GET", "/api/orders/ord-1", bobToken, true},
		{"GET", "/api/orders/%6Frd-1", aliceToken, true},
		{"HEAD", "/api/inventory/kb-1", aliceToken, true},
		{"HEAD", "/api/inventory/%6Bb-1", aliceToken, true},
		{"HEAD", "/api/inventory?pageToken=t&pageSize=2", aliceToken, true},
		{"HEAD", "/api/orders/ord-1", bobToken, true},
		{"HEAD", "/api/inventory?pageSize=x", aliceToken, false},
	}
	for _, path := range []string{"generated", "descriptors"} {
		t.Run(path, func(t *testing.T) {
			var su setup
			if path == "descriptors" {
				su.cfg = func(c *config.Config) { toDescriptors(t, c, false) }
			}
			h, f := staleHarness(t, su)
			if path == "descriptors" && len(builtIn(h.srv.snap.Load().cfg, registrations)) != 0 {
				t.Fatal("built-in registrations still serve: the descriptor path is not under test")
			}
			for _, tt := range tests {
				key, ok := keyBefore(t, h, tt.method, tt.target, tt.token)
				if ok != tt.keyed {
					t.Fatalf("%s %s: keyed before = %v, want %v", tt.method, tt.target, ok, tt.keyed)
				}
				n := h.srv.copies.lru.Stats().Copies
				f.set(nil)
				start := time.Now()
				live := h.do(tt.method, tt.target, tt.token, "")
				switch cp, kept := h.srv.copies.lru.Get(key); {
				case !tt.keyed && live.status != http.StatusBadRequest:
					t.Errorf("%s %s = %d, want 400", tt.method, tt.target, live.status)
				case !tt.keyed && h.srv.copies.lru.Stats().Copies != n:
					t.Errorf("%s %s (400) kept a copy", tt.method, tt.target)
				case tt.keyed && live.status != http.StatusOK:
					t.Errorf("%s %s = %d %s, want 200", tt.method, tt.target, live.status, live.body)
				case tt.keyed && tt.method == "GET" && (!kept || cp.Stored.Before(start)):
					t.Errorf("GET %s kept no copy under the key edges made before", tt.target)
				}
				if !tt.keyed {
					continue
				}
				// A marker under the old key: the failing request answers it.
				marker := []byte(`{"marker":"` + tt.method + tt.target + tt.token + `"}`)
				h.srv.copies.lru.Put(key, stale.Copy{Stored: time.Now(), ContentType: "application/json", Body: marker})
				f.set(status.Error(codes.Unavailable, "down"))
				got := h.do(tt.method, tt.target, tt.token, "")
				wantLen := strconv.Itoa(len(marker))
				if got.status != http.StatusOK || got.header.Get("Content-Length") != wantLen ||
					(tt.method == "GET" && !bytes.Equal(got.body, marker)) {
					t.Errorf("%s %s while failing = %d %v %s, want the copy under the old key", tt.method, tt.target, got.status, got.header, got.body)
				}
			}
		})
	}
}

// TestStaleKeyDynamic: the descriptor path calls with a dynamic message,
// keyed by its deterministic bytes; they are its generated type's (which
// the generated path, and edges before the capture, key by) even where a
// oneof member's number is below a set plain field's: protobuf-go writes
// oneof members last in both (the order of the old golang/protobuf).
func TestStaleKeyDynamic(t *testing.T) {
	gen := &annotations.HttpRule{Pattern: &annotations.HttpRule_Get{Get: "/v1/x"}, Body: "*"}
	dyn := dynamicpb.NewMessage(gen.ProtoReflect().Descriptor())
	fields := dyn.Descriptor().Fields()
	dyn.Set(fields.ByName("get"), protoreflect.ValueOfString("/v1/x"))
	dyn.Set(fields.ByName("body"), protoreflect.ValueOfString("*"))
	det := proto.MarshalOptions{Deterministic: true}
	want, err := det.Marshal(gen)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := det.Marshal(dyn); err != nil || !bytes.Equal(got, want) {
		t.Errorf("dynamic HttpRule marshals to %x, %v; its generated type to %x", got, err, want)
	}
}

// TestStaleBreakerOpen: with the inventory's breaker open, a call it
// refuses never reaches the upstream, yet is answered the copy: its
// message was captured before the chain ran.
func TestStaleBreakerOpen(t *testing.T) {
	ups := NewUpstreams(interceptors.WithLogger(discardLogger()))
	t.Cleanup(ups.Close)
	h, f := staleHarness(t, setup{
		cfg: func(c *config.Config) {
			for i := range c.Upstreams {
				r := &c.Upstreams[i].Resilience
				r.Breaker.ConsecutiveFailures, r.Breaker.CoolDown = 1, time.Minute
				r.Retry.MaxAttempts = 1
			}
		},
		opts: []Option{WithUpstreams(ups)},
	})
	var calls atomic.Int64
	next := h.inv.getItem
	h.inv.getItem = func(ctx context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		calls.Add(1)
		return next(ctx, r)
	}
	if got := h.do("GET", "/api/inventory/A", aliceToken, ""); got.status != http.StatusOK {
		t.Fatalf("first GET = %d %s", got.status, got.body)
	}
	f.set(status.Error(codes.Unavailable, "down"))
	if got := h.do("GET", "/api/inventory/A", aliceToken, ""); got.header.Get("Cache-Status") != "Portico; fwd=stale; detail=unavailable" {
		t.Fatalf("GET failing = %d %v, want the copy for the upstream's failure", got.status, got.header)
	}
	before := calls.Load()
	got := h.do("GET", "/api/inventory/A", aliceToken, "")
	if calls.Load() != before {
		t.Fatal("the call after the failure reached the upstream: the breaker did not open")
	}
	if got.status != http.StatusOK || got.header.Get("Cache-Status") != "Portico; fwd=stale; detail=circuit-open" {
		t.Errorf("GET with the breaker open = %d %v %s, want the copy for circuit-open", got.status, got.header, got.body)
	}
}
