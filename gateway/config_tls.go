package gateway

import (
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/portico-gateway/portico/internal/tlsconfig"
)

// TLSConfig terminates TLS at the edge. Empty means plaintext HTTP. With a
// pair the edge serves HTTPS only, TLS 1.2 or later with forward-secret
// AEAD suites, HTTP/2 by ALPN and HTTP/1.1; the pair is re-read when its
// files change (checked at most once a second) and on SIGHUP, so a renewed
// certificate needs no restart.
type TLSConfig struct {
	// CertFile is the PEM certificate chain. Required with KeyFile.
	CertFile string `yaml:"cert_file,omitempty"`
	// KeyFile is its PEM private key. Keep it private.
	KeyFile string `yaml:"key_file,omitempty"`
}

// UpstreamTLSConfig dials one upstream over TLS (or mTLS). Empty means
// plaintext gRPC, as before.
type UpstreamTLSConfig struct {
	// Enabled turns TLS on with the system's CAs; setting CAFile or a
	// client pair turns it on too.
	Enabled bool `yaml:"enabled,omitempty"`
	// CAFile holds the PEM CAs that sign the upstream's certificate.
	// Empty means the system roots.
	CAFile string `yaml:"ca_file,omitempty"`
	// CertFile and KeyFile are the edge's client pair, for an upstream that
	// requires client certificates (mTLS). Both or neither; re-read when
	// they change.
	CertFile string `yaml:"cert_file,omitempty"`
	KeyFile  string `yaml:"key_file,omitempty"`
	// ServerName is the name checked in the upstream's certificate. Empty
	// means the host dialled.
	ServerName string `yaml:"server_name,omitempty"`
}

// On reports whether the edge serves TLS.
func (c TLSConfig) On() bool { return c.CertFile != "" || c.KeyFile != "" }

func (c TLSConfig) validate(v *validator) {
	if !c.On() {
		return
	}
	if _, _, err := tlsconfig.Server(c.CertFile, c.KeyFile, ""); err != nil {
		v.add("tls", "%v", err)
	}
}

// On reports whether the upstream is dialled over TLS.
func (c UpstreamTLSConfig) On() bool {
	return c.Enabled || c.CAFile != "" || c.CertFile != "" || c.KeyFile != ""
}

// dialOptions returns the transport credentials for the upstream, none
// for plaintext (the dialers' default).
func (c UpstreamTLSConfig) dialOptions() ([]grpc.DialOption, error) {
	if !c.On() {
		return nil, nil
	}
	cfg, err := tlsconfig.Client(c.CAFile, c.CertFile, c.KeyFile, c.ServerName)
	if err != nil {
		return nil, err
	}
	return []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(cfg))}, nil
}

func (c Config) validateUpstreamTLS(v *validator) {
	for i, u := range c.Upstreams {
		if _, err := u.TLS.dialOptions(); err != nil {
			v.add("upstreams["+strconv.Itoa(i)+"].tls", "%v", err)
		}
	}
}

// edgeTLS is the edge's TLS state: the server config and its pair.
type edgeTLS struct {
	cfg  *tls.Config
	cert *tlsconfig.Cert
}

// buildTLS loads the edge's pair; nil without a tls section.
func buildTLS(c TLSConfig, l *slog.Logger) (*edgeTLS, error) {
	if !c.On() {
		return nil, nil
	}
	cfg, cert, err := tlsconfig.Server(c.CertFile, c.KeyFile, "")
	if err != nil {
		return nil, err
	}
	cert.Failed = func(err error) { l.Warn("TLS certificate not reloaded; keeping the running one", "err", err.Error()) }
	return &edgeTLS{cfg: cfg, cert: cert}, nil
}

// serveOn serves hs on lis: HTTPS with HTTP/2 when the edge has a tls
// section (ServeTLS adds "h2" to ALPN), plaintext HTTP otherwise.
func (s *Server) serveOn(hs *http.Server, lis net.Listener) error {
	if s.tls == nil {
		return hs.Serve(lis)
	}
	hs.TLSConfig = s.tls.cfg
	return hs.ServeTLS(lis, "", "")
}

// ReloadTLS re-reads the edge's certificate pair now (SIGHUP); on error
// the running pair stays. A no-op without a tls section.
func (s *Server) ReloadTLS() error {
	if s.tls == nil {
		return nil
	}
	return s.tls.cert.Reload()
}
