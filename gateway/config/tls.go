package config

import (
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/portico-gateway/portico/internal/tlsconfig"
)

// TLSConfig terminates TLS at the edge. Empty means plaintext HTTP. With a
// pair the edge serves HTTPS only, TLS 1.2 or later with forward-secret
// AEAD suites, HTTP/2 by ALPN and HTTP/1.1. Every handshake takes the
// settings of the config live at that moment, so a reload that adds,
// changes or removes this section applies to the next connection, and
// connections already open keep theirs. The pair is also re-read when its
// files change (checked at most once a second) and on SIGHUP, so a renewed
// certificate needs no config change.
type TLSConfig struct {
	// CertFile is the PEM certificate chain. Required with KeyFile.
	CertFile string `yaml:"cert_file,omitempty"`
	// KeyFile is its PEM private key. Keep it private.
	KeyFile string `yaml:"key_file,omitempty"`
	// ClientCAFile, when set, holds the PEM CAs that must sign a client
	// certificate on every connection (mTLS); re-read on SIGHUP. Empty
	// means no client certificate is asked for. Needs the pair.
	ClientCAFile string `yaml:"client_ca_file,omitempty"`
}

// UpstreamTLSConfig dials one upstream over TLS (or mTLS). Empty means
// plaintext gRPC, as before. Any field set turns TLS on. The name each
// certificate is checked against is ServerName's.
type UpstreamTLSConfig struct {
	// Enabled turns TLS on with the system's CAs; setting any other
	// field (CAFile, the client pair, ServerName) turns it on too.
	Enabled bool `yaml:"enabled,omitempty"`
	// CAFile holds the PEM CAs that sign the upstream's certificate.
	// Empty means the system roots.
	CAFile string `yaml:"ca_file,omitempty"`
	// CertFile and KeyFile are the edge's client pair, for an upstream that
	// requires client certificates (mTLS). Both or neither; re-read when
	// they change.
	CertFile string `yaml:"cert_file,omitempty"`
	KeyFile  string `yaml:"key_file,omitempty"`
	// ServerName, when set, is the name checked in the certificate of
	// every instance of the upstream, and turns TLS on (a name to check
	// only means something over TLS). Empty means the host dialled: with
	// an address list each instance's certificate is checked against its
	// own host, so an instance dialled by IP needs an IP SAN; a dns:///
	// target keeps its DNS name.
	ServerName string `yaml:"server_name,omitempty"`
}

// On reports whether the edge serves TLS.
func (c TLSConfig) On() bool { return c.CertFile != "" || c.KeyFile != "" || c.ClientCAFile != "" }

func (c TLSConfig) validate(v *validator) {
	if !c.On() {
		return
	}
	_, _, err := tlsconfig.Server(c.CertFile, c.KeyFile, c.ClientCAFile)
	for _, e := range unjoin(err) { // the pair's and the client CA's, each on its line
		v.add("tls", "%v", e)
	}
}

// On reports whether the upstream is dialled over TLS: Enabled, or any
// other field set. A lone server_name turns it on too, as ca_file does:
// it says the upstream speaks TLS, and dialling it in plaintext would
// send the edge's calls (identity assertions included) in the clear
// while the config reads as TLS.
func (c UpstreamTLSConfig) On() bool {
	return c.Enabled || c.CAFile != "" || c.CertFile != "" || c.KeyFile != "" || c.ServerName != ""
}

// Summary says how the upstream is dialled: "tls off", or "tls on" with
// the CA file (else the system CAs), the client pair and the server
// name, for check-config's summary and describe.
func (c UpstreamTLSConfig) Summary() string {
	if !c.On() {
		return "tls off"
	}
	parts := []string{"system CAs"}
	if c.CAFile != "" {
		parts[0] = "ca " + c.CAFile
	}
	if c.CertFile != "" {
		parts = append(parts, "client cert "+c.CertFile)
	}
	if c.ServerName != "" {
		parts = append(parts, "server_name "+c.ServerName)
	}
	return "tls on (" + strings.Join(parts, ", ") + ")"
}

// DialOptions returns the transport credentials for the upstream, none
// for plaintext (the dialers' default).
func (c UpstreamTLSConfig) DialOptions() ([]grpc.DialOption, error) {
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
		_, err := u.TLS.DialOptions()
		for _, e := range unjoin(err) {
			v.add("upstreams["+strconv.Itoa(i)+"].tls", "%v", e)
		}
	}
}
