package config

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/portico-gateway/portico/gateway/route/selector"
	"github.com/portico-gateway/portico/interceptors"
)

// Validate reports every problem with c, each naming its field path: its
// fields' forms and ranges, then the semantic checks (check.go). Zero
// optional fields are valid (they mean the default). It is Check without
// checks: the one validation a config gets, whether it was parsed from a
// file or built in Go.
func (c Config) Validate() error {
	_, err := c.Check()
	return err
}

// Check reports every problem with c, each naming its field path: its
// fields' forms and ranges; then, once those pass, each of checks (the
// gateway's route table: gateway.CheckRoutes); then the semantic checks
// (check.go), so that one run names every mistake. Load and Parse run it
// on the document, gateway.New and Reload on the Config they are given.
// It returns c as the checks leave it (with what they loaded, WithLoaded).
func (c Config) Check(checks ...Check) (Config, error) {
	v := &validator{}
	c.validate(v)
	if len(v.errs) == 0 { // the checks need well-formed fields
		for _, check := range checks {
			next, err := check(c)
			if err != nil {
				v.errs = append(v.errs, errors.New(strings.TrimPrefix(err.Error(), "gateway config: ")))
				continue
			}
			c = next
		}
	}
	c.checkSemantics(v) // beside the field checks: every reason at once
	if err := v.err(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// validate adds to v every field of c that is out of its range or form.
func (c Config) validate(v *validator) {
	if c.Listen != "" {
		_, port, err := net.SplitHostPort(c.Listen)
		if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil {
			v.add("listen", "want host:port with a port of 0-65535, got %q", c.Listen)
		}
	}
	v.within("shutdown_grace", c.ShutdownGrace, 0, MaxShutdownGrace)
	v.within("drain_delay", c.DrainDelay, 0, MaxShutdownGrace)
	v.within("http.read_header_timeout", c.HTTP.ReadHeaderTimeout, MinHTTPTimeout, MaxHTTPTimeout)
	v.within("http.read_timeout", c.HTTP.ReadTimeout, MinHTTPTimeout, MaxHTTPTimeout)
	v.within("http.idle_timeout", c.HTTP.IdleTimeout, MinHTTPTimeout, MaxHTTPTimeout)
	if c.HTTP.BodyTimeout >= 0 {
		v.within("http.body_timeout", c.HTTP.BodyTimeout, MinHTTPTimeout, MaxHTTPTimeout)
	}
	if c.HTTP.MinBodyRate < -1 || c.HTTP.MinBodyRate > MaxMinBodyRate {
		v.add("http.min_body_rate", "want bytes a second (at most %d), or -1 for no minimum rate, got %d", MaxMinBodyRate, c.HTTP.MinBodyRate)
	}
	if c.HTTP.MaxHeaderBytes < 0 {
		v.add("http.max_header_bytes", "must not be negative")
	}
	if c.HTTP.MaxConnections < -1 {
		v.add("http.max_connections", "want connections, 0 for the default (from the open-file limit) or -1 for no cap, got %d", c.HTTP.MaxConnections)
	}
	v.nonNegative("health.timeout", c.Health.Timeout)
	c.validateUpstreams(v)
	c.validateRoutes(v)
	c.Auth.validate(v)
	c.CORS.validate(v)
	c.Redis.validate(v)
	c.Telemetry.validate(v)
	c.Shed.validate(v)
	c.Streams.validate(v)
	c.Identity.validate(v)
	c.TLS.validate(v)
	c.validateUpstreamTLS(v)
	c.validateOps(v)
	c.Limits.validate(v)
	c.Problems.validate(v)
	c.Stale.validate(v)
}

func (c Config) validateUpstreams(v *validator) {
	if len(c.Upstreams) == 0 {
		v.add("upstreams", "at least one upstream is required")
	}
	seen := map[string]int{}
	for i, u := range c.Upstreams {
		p := fmt.Sprintf("upstreams[%d]", i)
		if !validName(u.Name) {
			v.add(p+".name", "want 1-32 characters of [a-z0-9-] starting with a letter, got %q", u.Name)
		} else if j, dup := seen[u.Name]; dup {
			v.add(p+".name", "%q is also upstreams[%d]", u.Name, j)
		}
		seen[u.Name] = i
		if len(u.Addresses) == 0 {
			v.add(p+".addresses", "at least one address is required")
		}
		var ae *interceptors.AddressError
		for _, e := range unjoin(interceptors.CheckAddresses(u.Addresses)) {
			if errors.As(e, &ae) {
				v.add(fmt.Sprintf("%s.addresses[%d]", p, ae.Index), "%s", ae.Msg)
			} else {
				v.add(p+".addresses", "%v", e)
			}
		}
		v.nonNegative(p+".timeout", u.Timeout)
		if interceptors.HostPorts(u.Addresses) || len(u.Addresses) == 1 && strings.TrimSpace(u.Addresses[0]) != "" {
			u.validateResilience(v, p)
		}
		u.validateServices(v, p)
	}
}

func (c Config) validateRoutes(v *validator) {
	if c.Routes.MaxBodyBytes < 0 {
		v.add("routes.max_body_bytes", "must not be negative")
	}
	v.nonNegative("routes.max_timeout", c.Routes.MaxTimeout)
	keys := make([]string, 0, len(c.Routes.Overrides))
	for k := range c.Routes.Overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o := c.Routes.Overrides[k]
		p := fmt.Sprintf("routes.overrides[%q]", k)
		if _, err := selector.Parse(k); err != nil {
			v.add(p, "%v", err)
		}
		v.nonNegative(p+".timeout", o.Timeout)
		v.nonNegative(p+".max_timeout", o.MaxTimeout)
		v.within(p+".max_duration", o.MaxDuration, 0, MaxStreamDuration)
		v.within(p+".idle_timeout", o.IdleTimeout, 0, MaxStreamDuration)
		if o.MaxBodyBytes < 0 {
			v.add(p+".max_body_bytes", "must not be negative")
		}
		o.StaleIfError.validate(v, p+".stale_if_error")
		if o.Timeout > 0 && o.MaxTimeout > 0 && o.Timeout > o.MaxTimeout {
			v.add(p+".timeout", "%v exceeds max_timeout %v", o.Timeout, o.MaxTimeout)
		}
	}
}

// validName: 1-32 of [a-z0-9-], starting with a letter; usable as a
// resolver scheme, metric label and log field.
func validName(s string) bool {
	if s == "" || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validator collects field errors.
type validator struct {
	errs []error
}

func (v *validator) add(path, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
}

func (v *validator) nonNegative(path string, d time.Duration) {
	if d < 0 {
		v.add(path, "must not be negative, got %v", d)
	}
}

// offOrCount reports n below -1: a count field where -1 turns the
// feature off (off says what -1 means) and 0 is the default. Any other
// negative is a typo, not a way to turn it off.
func (v *validator) offOrCount(path string, n int, off string) {
	if n < -1 {
		v.add(path, "want 0 (the default), a positive number or -1 (%s), got %d", off, n)
	}
}

// within reports d outside lo..hi; zero (the default) and negative
// (nonNegative's message) are judged apart.
func (v *validator) within(path string, d, lo, hi time.Duration) {
	switch {
	case d < 0:
		v.nonNegative(path, d)
	case d > 0 && d < lo:
		v.add(path, "want at least %v (0: the default), got %v", lo, d)
	case d > hi:
		v.add(path, "want at most %v, got %v", hi, d)
	}
}

func (v *validator) err() error {
	if len(v.errs) == 0 {
		return nil
	}
	return fmt.Errorf("gateway config: %w", errors.Join(v.errs...))
}
