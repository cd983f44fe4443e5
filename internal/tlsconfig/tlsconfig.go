// Package tlsconfig builds the TLS configurations Portico's processes use,
// from PEM files, with modern defaults: TLS 1.2 or later, and for TLS 1.2
// only ECDHE suites with AEAD ciphers (TLS 1.3 suites are not
// configurable in Go and are all good). Server certificates reload when
// their files change (checked at most once a second, on a handshake) or
// when Reload is called (SIGHUP), without a restart; a pair that fails to
// load is reported and the running one stays.
package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/portico-gateway/portico/internal/boundedfile"
)

// suites12 are the TLS 1.2 suites allowed: forward secrecy and AEAD only.
var suites12 = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

func base() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: suites12}
}

// Server returns a server configuration presenting the pair in certFile
// and keyFile (reloaded as the package says) and, when clientCAFile is
// set, requiring client certificates signed by it (mTLS). The Cert lets
// the caller force a reload.
func Server(certFile, keyFile, clientCAFile string) (*tls.Config, *Cert, error) {
	c, certErr := NewCert(certFile, keyFile)
	var cas *x509.CertPool
	var caErr error
	if clientCAFile != "" {
		cas, caErr = pool(clientCAFile)
	}
	if err := errors.Join(certErr, caErr); err != nil { // both, so a fix needs one round
		return nil, nil, err
	}
	cfg := base()
	cfg.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.get(), nil }
	if cas != nil {
		cfg.ClientCAs, cfg.ClientAuth = cas, tls.RequireAndVerifyClientCert
	}
	return cfg, c, nil
}

// Client returns a client configuration verifying servers with the CAs in
// caFile ("" means the system roots) and, when certFile and keyFile are
// set, presenting that pair (mTLS). serverName overrides the name checked
// in the server's certificate ("" means the dialled host).
func Client(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	cfg := base()
	cfg.ServerName = serverName
	var caErr, pairErr error
	if caFile != "" {
		cfg.RootCAs, caErr = pool(caFile)
	}
	switch {
	case (certFile == "") != (keyFile == ""):
		pairErr = errors.New("tls: a client certificate needs both a cert and a key file")
	case certFile != "":
		var c *Cert
		if c, pairErr = NewCert(certFile, keyFile); pairErr == nil {
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return c.get(), nil }
		}
	}
	if err := errors.Join(caErr, pairErr); err != nil { // both, so a fix needs one round
		return nil, err
	}
	return cfg, nil
}

func pool(file string) (*x509.CertPool, error) {
	b, err := boundedfile.Read(file, 0)
	if err != nil {
		return nil, fmt.Errorf("tls: CA file: %w", err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("tls: CA file %s holds no PEM certificate", file)
	}
	return p, nil
}

// Cert is a certificate and key pair read from files, reloaded when they
// change. Safe for concurrent use.
type Cert struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
	stamp             atomic.Value // stamp of the files loaded
	nextCheck         atomic.Int64 // unix nanos
	mu                sync.Mutex   // one reload at a time
	// Failed, when set, hears of a reload that failed (the running pair
	// stays). Set it before use.
	Failed func(error)
}

type stamp struct{ cert, key time.Time }

// NewCert loads the pair; an error names the file, never key material.
func NewCert(certFile, keyFile string) (*Cert, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("tls: both a cert file and a key file are required")
	}
	c := &Cert{certFile: certFile, keyFile: keyFile}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Reload reads the pair again now; on error the running pair stays.
func (c *Cert) Reload() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := c.statFiles()
	if err != nil {
		return err
	}
	pair, err := loadPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("tls: load %s and %s: %w", c.certFile, c.keyFile, err)
	}
	c.cur.Store(&pair)
	c.stamp.Store(st)
	return nil
}

func (c *Cert) statFiles() (stamp, error) {
	ci, err := os.Stat(c.certFile)
	if err != nil {
		return stamp{}, fmt.Errorf("tls: %w", err)
	}
	ki, err := os.Stat(c.keyFile)
	if err != nil {
		return stamp{}, fmt.Errorf("tls: %w", err)
	}
	return stamp{ci.ModTime(), ki.ModTime()}, nil
}

// get returns the pair, first reloading it if the files changed (checked
// at most once a second).
func (c *Cert) get() *tls.Certificate {
	now := time.Now().UnixNano()
	if next := c.nextCheck.Load(); now >= next && c.nextCheck.CompareAndSwap(next, now+int64(time.Second)) {
		if st, err := c.statFiles(); err == nil && st != c.stamp.Load().(stamp) {
			if err := c.Reload(); err != nil && c.Failed != nil {
				c.Failed(err)
			}
		}
	}
	return c.cur.Load()
}

// Leaf returns the certificate presented now (tests, logs).
func (c *Cert) Leaf() *x509.Certificate { return c.get().Leaf }

// loadPair is tls.LoadX509KeyPair with each file read within
// boundedfile.DefaultLimit.
func loadPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := boundedfile.Read(certFile, 0)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := boundedfile.Read(keyFile, 0)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
