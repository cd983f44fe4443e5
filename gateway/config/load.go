package config

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/portico-gateway/portico/gateway/strictyaml"
	"github.com/portico-gateway/portico/internal/boundedfile"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// Parse decodes a YAML config strictly (unknown keys, wrong types
// and duplicate keys are errors naming the field path), fills in defaults
// and validates the result (Check, with checks: gateway.CheckRoutes
// checks it against the route table), so `portico check-config` catches
// everything short of dialing.
func Parse(data []byte, checks ...Check) (Config, error) { return parse(data, "", checks) }

// parse is Parse for a file in dir: its relative paths name
// files in dir (resolvePaths). An empty dir leaves them as written.
func parse(data []byte, dir string, checks []Check) (Config, error) {
	var c Config
	if err := strictyaml.Decode(data, &c); err != nil {
		return Config{}, fmt.Errorf("gateway config: %w", err)
	}
	if dir != "" {
		c.resolvePaths(dir)
	}
	return c.WithDefaults().Check(checks...)
}

// Decode decodes a config strictly and applies defaults without
// validating it: for the side of a diff that is already running (an admin
// API's /admin/config, whose secrets are redacted) or an older file.
func Decode(data []byte) (Config, error) {
	var c Config
	if err := strictyaml.Decode(data, &c); err != nil {
		return Config{}, fmt.Errorf("gateway config: %w", err)
	}
	return c.WithDefaults(), nil
}

// DecodeFile is Decode for the config file at path (at most
// MaxFileBytes): its relative file paths resolved as Load resolves them,
// so it compares with a loaded config path for path.
func DecodeFile(path string) (Config, error) {
	data, err := boundedfile.Read(path, MaxFileBytes)
	if err != nil {
		return Config{}, fmt.Errorf("gateway config: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return Config{}, fmt.Errorf("gateway config: %w", err)
	}
	var c Config
	if err := strictyaml.Decode(data, &c); err != nil {
		return Config{}, fmt.Errorf("%s: gateway config: %w", path, err)
	}
	c.resolvePaths(dir)
	return c.WithDefaults(), nil
}

// MaxFileBytes bounds a config file (4 MiB): Load refuses a
// larger one, or a stream such as /dev/urandom, naming the file and the
// bound.
const MaxFileBytes = boundedfile.DefaultLimit

// Load reads and parses the config file at path (at most
// MaxFileBytes), as Parse does, with its relative file paths resolved
// against the file's absolute directory (resolvePaths): the same file
// loads to the same Config, and so the same version, however path is
// spelled (gateway.dev.yaml, ./dev/gateway.dev.yaml or absolute).
func Load(path string, checks ...Check) (Config, error) {
	data, err := boundedfile.Read(path, MaxFileBytes)
	if err != nil {
		return Config{}, fmt.Errorf("gateway config: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return Config{}, fmt.Errorf("%s: gateway config: %w", path, err)
	}
	c, err := parse(data, dir, checks)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// resolvePaths makes every relative file path in c relative to dir (the
// config file's directory, absolute), as Prometheus and Caddy read
// theirs: a config names its neighbours the same way from whatever
// directory the edge starts in. Every path comes out cleaned and, dir
// being absolute, absolute: errors name the file opened, and the
// config's version does not depend on how its path was spelled.
func (c *Config) resolvePaths(dir string) {
	resolve := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(dir, p)
	}
	for _, p := range c.filePaths() {
		if *p != "" {
			*p = resolve(*p)
		}
	}
	for _, r := range c.secretRefs() {
		if f, ok := strings.CutPrefix(*r, "file:"); ok && f != "" {
			*r = "file:" + resolve(f)
		}
	}
}

// secretRefs points at every SecretRef of c, whose file: form names a file.
func (c *Config) secretRefs() []*string {
	var rs []*string
	for i := range c.Auth.Tokens {
		rs = append(rs, &c.Auth.Tokens[i].Token)
	}
	for i := range c.Auth.APIKeys {
		rs = append(rs, &c.Auth.APIKeys[i].Key)
	}
	for i := range c.Auth.SignedApps.Apps {
		rs = append(rs, &c.Auth.SignedApps.Apps[i].Secret)
	}
	return rs
}

// filePaths points at every field of c that names a file.
func (c *Config) filePaths() []*string {
	ps := []*string{&c.Identity.KeysFile, &c.Auth.JWT.JWKSFile, &c.TLS.CertFile, &c.TLS.KeyFile, &c.TLS.ClientCAFile}
	for i := range c.Upstreams {
		t := &c.Upstreams[i].TLS
		ps = append(ps, &t.CAFile, &t.CertFile, &t.KeyFile, &c.Upstreams[i].Descriptors)
	}
	return ps
}

// Dev is the dev profile (portico dev): the edge on
// 127.0.0.1:basePort, inventory on basePort+1, payment on +2, order on +3,
// the four demo tokens, one demo signed app, the built-in policy and CORS
// for http://localhost:3000:
//
//	demo-admin-token   course-admin   admin
//	demo-read-token    course-reader  reader
//	demo-alice-token   alice          customer
//	demo-bob-token     bob            customer
//	app demo-app, secret demo-app-secret-0001   demo-app   customer
func Dev(basePort int) Config {
	addr := func(off int) []string {
		return []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(basePort+off))}
	}
	c := Config{
		Listen:      net.JoinHostPort("127.0.0.1", strconv.Itoa(basePort)),
		AdminListen: net.JoinHostPort("127.0.0.1", strconv.Itoa(basePort+4)),
		Upstreams: []UpstreamConfig{
			{Name: "inventory", Addresses: addr(1), HealthService: "portico.inventory.v1.InventoryService"},
			{Name: "payment", Addresses: addr(2), HealthService: "portico.payment.v1.PaymentService"},
			{Name: "order", Addresses: addr(3), HealthService: "portico.order.v1.OrderService"},
		},
		Auth: AuthConfig{Tokens: []TokenConfig{
			{Token: "demo-admin-token", Subject: "course-admin", Role: callmeta.RoleAdmin},
			{Token: "demo-read-token", Subject: "course-reader", Role: callmeta.RoleReader},
			{Token: "demo-alice-token", Subject: "alice", Role: callmeta.RoleCustomer},
			{Token: "demo-bob-token", Subject: "bob", Role: callmeta.RoleCustomer},
		}, AllowPlaintextSecrets: true, SignedApps: SignedAppsConfig{Apps: []AppConfig{
			{ID: "demo-app", Secret: "demo-app-secret-0001", Subject: "demo-app", Roles: []string{callmeta.RoleCustomer}},
		}}},
		CORS:   CORSConfig{AllowedOrigins: []string{"http://localhost:3000"}},
		Shed:   ShedConfig{MaxInFlight: DevMaxInFlight},
		Limits: DevLimits(),
	}
	return c.WithDefaults()
}

// WithDefaults returns c with every zero optional field set to its
// default. Overrides keep their zeros: zero there means "the route's
// default", resolved per route in New.
func (c Config) WithDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	def(&c.HTTP.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&c.HTTP.ReadTimeout, DefaultReadTimeout)
	def(&c.HTTP.BodyTimeout, DefaultBodyTimeout)
	if c.HTTP.MinBodyRate == 0 {
		c.HTTP.MinBodyRate = DefaultMinBodyRate
	}
	def(&c.HTTP.IdleTimeout, DefaultIdleTimeout)
	if c.HTTP.MaxHeaderBytes == 0 {
		c.HTTP.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.Upstreams != nil { // copy: never write through the caller's slice
		ups := make([]UpstreamConfig, len(c.Upstreams))
		for i, u := range c.Upstreams {
			def(&u.Timeout, DefaultUpstreamTimeout)
			ups[i] = u
		}
		c.Upstreams = ups
	}
	if c.Routes.MaxBodyBytes == 0 {
		c.Routes.MaxBodyBytes = DefaultMaxBodyBytes
	}
	def(&c.Routes.MaxTimeout, DefaultMaxTimeout)
	def(&c.Health.Timeout, DefaultHealthTimeout)
	c.Shed = c.Shed.withDefaults()
	c.Streams = c.Streams.withDefaults()
	// Derived, it stays within its bound: a longer timeout is the route
	// table's error to report, not a shutdown_grace the user never wrote.
	def(&c.ShutdownGrace, min(max(DefaultShutdownGrace, c.LongestTimeout()+time.Second), MaxShutdownGrace))
	return c
}
