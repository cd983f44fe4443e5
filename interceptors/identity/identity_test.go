package identity

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/callmeta"
)

const invAud = "portico.inventory.v1.InventoryService"

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func mustKeys(t testing.TB, keys ...Key) *Keys {
	t.Helper()
	r, err := NewKeys(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fixedClock(at *time.Time) Option { return WithClock(func() time.Time { return *at }) }

var alice = callmeta.Principal{Subject: "alice", Role: callmeta.RoleCustomer}

// TestVerify covers what a verifier must refuse: each case mints with one
// setup and verifies with another.
func TestVerify(t *testing.T) {
	k1, k2 := GenerateKey("k1"), GenerateKey("k2")
	k1Retiring := k1
	k1Retiring.NotAfter = t0.Add(10 * time.Minute)
	tamper := func(tok string) string { // flip a payload character in the times
		i := strings.LastIndex(tok, ".") - 3
		b := []byte(tok)
		b[i] ^= 1
		return string(b)
	}
	tests := []struct {
		name      string
		mintKeys  *Keys
		mintAud   string
		mintAt    time.Duration // after t0
		verKeys   *Keys
		verAt     time.Duration
		edit      func(string) string
		wantErr   error
		wantClaim bool
	}{
		{name: "valid", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1), wantClaim: true},
		{name: "valid near expiry", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1), verAt: DefaultTTL + DefaultLeeway - time.Second, wantClaim: true},
		{name: "expired", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1), verAt: DefaultTTL + DefaultLeeway, wantErr: ErrExpired},
		{name: "issued in the future", mintKeys: mustKeys(t, k1), mintAt: time.Minute, verKeys: mustKeys(t, k1), wantErr: ErrNotYet},
		{name: "wrong audience", mintKeys: mustKeys(t, k1), mintAud: "portico.payment.v1.PaymentService", verKeys: mustKeys(t, k1), wantErr: ErrAudience},
		{name: "other secret same id", mintKeys: mustKeys(t, GenerateKey("k1")), verKeys: mustKeys(t, k1), wantErr: ErrSignature},
		{name: "unknown key id", mintKeys: mustKeys(t, k2), verKeys: mustKeys(t, k1), wantErr: ErrUnknownKey},
		{name: "tampered payload", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1), edit: tamper, wantErr: ErrSignature},
		{name: "tampered signature", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1), edit: func(s string) string { return s[:len(s)-2] + "AA" }, wantErr: ErrSignature},
		{name: "signature cut", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1), edit: func(s string) string { return s[:len(s)-4] }, wantErr: ErrMalformed},
		{name: "extra part", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1), edit: func(s string) string { return s + ".x" }, wantErr: ErrMalformed},
		{name: "other version", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1), edit: func(s string) string { return "v2" + s[2:] }, wantErr: ErrMalformed},
		{name: "empty", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1), edit: func(string) string { return "" }, wantErr: ErrMissing},
		{name: "oversize", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1), edit: func(s string) string { return s + strings.Repeat("A", MaxAssertionLen) }, wantErr: ErrMalformed},
		// Rotation: k2 signs now, k1 verifies until its NOT-AFTER.
		{name: "new key while old signs", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k1, k2), wantClaim: true},
		{name: "old key within overlap", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k2, k1Retiring), verAt: 9 * time.Minute, mintAt: 9 * time.Minute, wantClaim: true},
		{name: "old key after overlap", mintKeys: mustKeys(t, k1), verKeys: mustKeys(t, k2, k1Retiring), verAt: 10 * time.Minute, mintAt: 10 * time.Minute, wantErr: ErrKeyRetired},
		{name: "new key after rotation", mintKeys: mustKeys(t, k2, k1Retiring), verKeys: mustKeys(t, k2, k1Retiring), verAt: time.Hour, mintAt: time.Hour, wantClaim: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mintAt, verAt := t0.Add(tt.mintAt), t0.Add(tt.verAt)
			m, err := NewMinter(tt.mintKeys, fixedClock(&mintAt))
			if err != nil {
				t.Fatal(err)
			}
			aud := invAud
			if tt.mintAud != "" {
				aud = tt.mintAud
			}
			tok, err := m.Mint(aud, alice, "")
			if err != nil {
				t.Fatalf("Mint: %v", err)
			}
			if tt.edit != nil {
				tok = tt.edit(tok)
			}
			v, err := NewVerifier(tt.verKeys, invAud, fixedClock(&verAt))
			if err != nil {
				t.Fatal(err)
			}
			c, err := v.Verify(tok)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Verify() error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantClaim && (c.Principal() != alice || c.Audience != invAud || !c.IssuedAt.Equal(mintAt.Truncate(time.Second))) {
				t.Errorf("Verify() = %+v, want alice for %s issued %v", c, invAud, mintAt)
			}
		})
	}
}

func TestMintRefusesBadClaims(t *testing.T) {
	m, err := NewMinter(mustKeys(t, GenerateKey("k1")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		aud  string
		p    callmeta.Principal
		for_ string
	}{
		{"no subject", invAud, callmeta.Principal{Role: "admin"}, ""},
		{"newline in subject", invAud, callmeta.Principal{Subject: "a\nb", Role: "admin"}, ""},
		{"long role", invAud, callmeta.Principal{Subject: "a", Role: strings.Repeat("r", MaxFieldLen+1)}, ""},
		{"bad for", invAud, alice, "x\x00"},
		{"no audience", "", alice, ""},
		{"audience with slash", "/a.B/C", alice, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tok, err := m.Mint(tt.aud, tt.p, tt.for_); err == nil {
				t.Errorf("Mint(%q, %+v, %q) = %q, want an error", tt.aud, tt.p, tt.for_, tok)
			}
		})
	}
}

func TestParseKeys(t *testing.T) {
	k1, k2 := GenerateKey("k1"), GenerateKey("k2")
	k2.NotAfter = t0
	tests := []struct {
		name    string
		text    string
		wantIDs []string
		wantErr bool
	}{
		{"one", k1.String(), []string{"k1"}, false},
		{"two lines with comment", "# ring; rotated monthly\n" + k1.String() + "\n\n" + k2.String() + "\n", []string{"k1", "k2"}, false},
		{"semicolons", k1.String() + ";" + k2.String(), []string{"k1", "k2"}, false},
		{"url alphabet", "k3 " + strings.Repeat("-_", 22), []string{"k3"}, false},
		{"empty", "", nil, true},
		{"short secret", "k1 c2hvcnQ=", nil, true},
		{"not base64", "k1 !!!!" + strings.Repeat("a", 44), nil, true},
		{"bad id", "k/1 " + strings.Repeat("A", 44), nil, true},
		{"duplicate id", k1.String() + "\n" + k1.String(), nil, true},
		{"signing key retires", k2.String(), nil, true},
		{"bad time", "k1 " + strings.Repeat("A", 44) + " tomorrow", nil, true},
		{"too many fields", "k1 " + strings.Repeat("A", 44) + " 2026-01-01T00:00:00Z x", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseKeys(tt.text)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseKeys() error = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), strings.Fields(k1.String())[1]) {
					t.Errorf("ParseKeys() error %q quotes a secret", err)
				}
				return
			}
			if got := strings.Join(r.IDs(), ","); got != strings.Join(tt.wantIDs, ",") {
				t.Errorf("ParseKeys() ids = %s, want %v", got, tt.wantIDs)
			}
			back, err := ParseKeys(r.String())
			if err != nil || back.String() != r.String() {
				t.Errorf("ParseKeys(String()) = %v, %v; want the same ring", back, err)
			}
		})
	}
}

func TestSetKeysRotatesWhileRunning(t *testing.T) {
	k1, k2 := GenerateKey("k1"), GenerateKey("k2")
	m, _ := NewMinter(mustKeys(t, k1))
	v, _ := NewVerifier(mustKeys(t, k1), invAud)
	v.SetKeys(mustKeys(t, k1, k2)) // verifiers learn k2 first
	m.SetKeys(mustKeys(t, k2, k1)) // then signers switch
	tok, _ := m.Mint(invAud, alice, "")
	if !strings.HasPrefix(tok, "v1.k2.") {
		t.Fatalf("Mint() after SetKeys = %q, want signed by k2", tok)
	}
	if _, err := v.Verify(tok); err != nil {
		t.Fatalf("Verify(k2 assertion) = %v", err)
	}
	v.SetKeys(mustKeys(t, k1))
	if _, err := v.Verify(tok); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Verify() after dropping k2 = %v, want ErrUnknownKey", err)
	}
}

func TestOptions(t *testing.T) {
	keys := mustKeys(t, GenerateKey("k1"))
	for name, opts := range map[string][]Option{
		"negative ttl":    {WithTTL(-1)},
		"ttl over max":    {WithTTL(DefaultMaxTTL + time.Second)},
		"negative leeway": {WithLeeway(-1)},
		"bad service":     {WithService("")},
	} {
		if _, err := NewMinter(keys, opts...); err == nil {
			t.Errorf("NewMinter(%s) = nil error", name)
		}
	}
	if _, err := NewVerifier(keys, "/not a service"); err == nil {
		t.Error("NewVerifier(bad audience) = nil error")
	}
	if _, err := NewMinter(nil); err == nil {
		t.Error("NewMinter(nil) = nil error")
	}
}

func TestAudience(t *testing.T) {
	for in, want := range map[string]string{
		"/portico.order.v1.OrderService/GetOrder": "portico.order.v1.OrderService",
		"portico.order.v1.OrderService/GetOrder":  "portico.order.v1.OrderService",
	} {
		if got := Audience(in); got != want {
			t.Errorf("Audience(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestKeysDerive: every process holding a ring derives the same secret for
// a label (replicas agree on page tokens), another label or another
// signing key a different one.
func TestKeysDerive(t *testing.T) {
	a, b := GenerateKey("a"), GenerateKey("b")
	r1, err := NewKeys(a, b)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := NewKeys(a)
	r3, _ := NewKeys(b, a)
	if string(r1.Derive("x")) != string(r2.Derive("x")) {
		t.Error("Derive differs between rings with one signing key")
	}
	if string(r1.Derive("x")) == string(r1.Derive("y")) || string(r1.Derive("x")) == string(r3.Derive("x")) {
		t.Error("Derive is the same for another label or another signing key")
	}
}
