package identity

import (
	"context"
	"crypto/ed25519"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/portico-gateway/portico/internal/callmeta"
)

// The per-hop cost of the internal identity: minting at the caller and
// checking at the callee (go test -bench . -benchmem ./interceptors/identity).

func BenchmarkMint(b *testing.B) {
	m, _ := NewMinter(mustKeys(b, GenerateKey("k1")))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Mint(invAud, alice, ""); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	keys := mustKeys(b, GenerateKey("k1"))
	m, _ := NewMinter(keys)
	v, _ := NewVerifier(keys, invAud)
	tok, _ := m.Mint(invAud, alice, "")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHop is both interceptors' work for one call: the edge's
// outgoing metadata, then the service's check and metadata rewrite.
func BenchmarkHop(b *testing.B) {
	keys := mustKeys(b, GenerateKey("k1"))
	m, _ := NewMinter(keys)
	v, _ := NewVerifier(keys, invAud)
	base := callmeta.WithPrincipal(context.Background(), alice)
	b.ReportAllocs()
	for b.Loop() {
		out, err := m.Outgoing(base, "/"+invAud+"/GetItem")
		if err != nil {
			b.Fatal(err)
		}
		md, _ := metadata.FromOutgoingContext(out)
		if _, err := v.incoming(metadata.NewIncomingContext(context.Background(), md)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEd25519 measures the alternative the package doc rejects, on the
// same machine, for comparison: sign and verify one assertion-sized message.
func BenchmarkEd25519(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	msg := []byte("v1.k1.cG9ydGljby5pbnZlbnRvcnkudjEuSW52ZW50b3J5U2VydmljZQphbGljZQpjdXN0b21lcgoKMTc2NDUwMDAwMAoxNzY0NTAwMDYw")
	sig := ed25519.Sign(priv, msg)
	b.Run("sign", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ed25519.Sign(priv, msg)
		}
	})
	b.Run("verify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !ed25519.Verify(pub, msg, sig) {
				b.Fatal("bad signature")
			}
		}
	})
}
