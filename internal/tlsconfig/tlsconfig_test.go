package tlsconfig_test

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/tlsconfig"
	"github.com/portico-gateway/portico/internal/tlsconfig/tlstest"
)

// handshake runs a TLS handshake over loopback TCP (buffered, unlike a
// pipe, so neither side blocks on the other's unread alert) and returns the
// client's view, or the first side's error.
func handshake(t *testing.T, srv, cli *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	errc := make(chan error, 1)
	go func() {
		a, err := lis.Accept()
		if err != nil {
			errc <- err
			return
		}
		defer a.Close()
		_ = a.SetDeadline(time.Now().Add(10 * time.Second))
		s := tls.Server(a, srv)
		err = s.Handshake()
		if err == nil { // a TLS 1.3 server checks the client's certificate here
			_, err = s.Read(make([]byte, 1))
		}
		errc <- err
	}()
	b, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_ = b.SetDeadline(time.Now().Add(10 * time.Second))
	c := tls.Client(b, cli)
	if err := c.Handshake(); err != nil {
		return c.ConnectionState(), err
	}
	_, _ = c.Write([]byte{1})
	_, rerr := c.Read(make([]byte, 1)) // the server's verdict: its alert, or EOF after success
	serr := <-errc
	if serr != nil {
		return c.ConnectionState(), serr
	}
	if rerr != nil && rerr.Error() != "EOF" {
		return c.ConnectionState(), rerr
	}
	return c.ConnectionState(), nil
}

func TestServerAndClient(t *testing.T) {
	ca := tlstest.NewCA(t, "test")
	other := tlstest.NewCA(t, "other")
	cert, key := ca.Issue(t, "server", "localhost")
	ccert, ckey := ca.Issue(t, "client")
	occert, ockey := other.Issue(t, "stranger")
	tests := []struct {
		name             string
		clientCA         string // server side: require client certs
		rootCA           string
		certFile, keyFil string
		maxVersion       uint16
		wantErr          bool
	}{
		{name: "tls", rootCA: ca.File},
		{name: "unknown server CA", rootCA: other.File, wantErr: true},
		{name: "mtls", clientCA: ca.File, rootCA: ca.File, certFile: ccert, keyFil: ckey},
		{name: "mtls without client cert", clientCA: ca.File, rootCA: ca.File, wantErr: true},
		{name: "mtls with a stranger's cert", clientCA: ca.File, rootCA: ca.File, certFile: occert, keyFil: ockey, wantErr: true},
		{name: "tls 1.1 refused", rootCA: ca.File, maxVersion: tls.VersionTLS11, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, err := tlsconfig.Server(cert, key, tt.clientCA)
			if err != nil {
				t.Fatal(err)
			}
			cli, err := tlsconfig.Client(tt.rootCA, tt.certFile, tt.keyFil, "localhost")
			if err != nil {
				t.Fatal(err)
			}
			if tt.maxVersion != 0 {
				cli.MinVersion, cli.MaxVersion = tls.VersionTLS10, tt.maxVersion
			}
			st, err := handshake(t, srv, cli)
			if (err != nil) != tt.wantErr {
				t.Fatalf("handshake = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && st.Version < tls.VersionTLS12 {
				t.Errorf("negotiated version %x, want TLS 1.2+", st.Version)
			}
		})
	}
}

// TestCertReloads: a pair replaced on disk is served from the next
// handshake after the once-a-second check, or at once on Reload, with no
// restart; a broken replacement keeps the running pair.
func TestCertReloads(t *testing.T) {
	ca := tlstest.NewCA(t, "test")
	cert, key := ca.Issue(t, "server", "localhost")
	srv, c, err := tlsconfig.Server(cert, key, "")
	if err != nil {
		t.Fatal(err)
	}
	cli, _ := tlsconfig.Client(ca.File, "", "", "localhost")
	first := c.Leaf().SerialNumber
	ca.Issue(t, "server", "localhost") // rotate in place
	if err := c.Reload(); err != nil {
		t.Fatal(err)
	}
	st, err := handshake(t, srv, cli)
	if err != nil || st.PeerCertificates[0].SerialNumber.Cmp(first) == 0 {
		t.Fatalf("after Reload the handshake = %v and serves serial %v, want a new certificate", err, st.PeerCertificates)
	}
	second := c.Leaf().SerialNumber
	ca.Issue(t, "server", "localhost")
	deadline := time.Now().Add(10 * time.Second)
	for c.Leaf().SerialNumber.Cmp(second) == 0 { // the change check runs at most once a second
		if time.Now().After(deadline) {
			t.Fatal("a changed pair was not picked up without Reload")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := tlsconfig.NewCert(cert, cert); err == nil {
		t.Error("NewCert(cert as key) = nil error")
	}
}

func TestClientNeedsBothFiles(t *testing.T) {
	if _, err := tlsconfig.Client("", "cert.pem", "", ""); err == nil {
		t.Error("Client(cert without key) = nil error")
	}
}
