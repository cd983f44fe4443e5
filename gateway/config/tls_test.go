package config

import "testing"

// TestUpstreamTLSOn: any field of an upstream's tls section turns TLS on,
// server_name alone included; Summary says so.
func TestUpstreamTLSOn(t *testing.T) {
	tests := []struct {
		tls  UpstreamTLSConfig
		want string
	}{
		{UpstreamTLSConfig{}, "tls off"},
		{UpstreamTLSConfig{Enabled: true}, "tls on (system CAs)"},
		{UpstreamTLSConfig{ServerName: "order.internal"}, "tls on (system CAs, server_name order.internal)"},
		{UpstreamTLSConfig{CAFile: "/etc/ca.pem", CertFile: "/etc/c.pem", KeyFile: "/etc/k.pem"},
			"tls on (ca /etc/ca.pem, client cert /etc/c.pem)"},
	}
	for _, tt := range tests {
		if got := tt.tls.Summary(); got != tt.want {
			t.Errorf("%+v: Summary() = %q, want %q", tt.tls, got, tt.want)
		}
		opts, err := tt.tls.DialOptions()
		if err != nil {
			continue // the files do not exist; On is what is checked
		}
		if on := tt.tls.On(); on != (len(opts) > 0) || on != (tt.want != "tls off") {
			t.Errorf("%+v: On() = %v with %d dial options", tt.tls, on, len(opts))
		}
	}
}
