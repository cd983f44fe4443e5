package deploy

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/interceptors/identity"
)

// composeFile is the part of a compose file the checks read.
type composeFile struct {
	Services map[string]struct {
		Build struct {
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		Command         []string          `yaml:"command"`
		Volumes         []string          `yaml:"volumes"`
		Ports           []string          `yaml:"ports"`
		StopGracePeriod string            `yaml:"stop_grace_period"`
		Environment     map[string]string `yaml:"environment"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// composeRoles maps each compose service to its portico subcommand.
var composeRoles = map[string]string{"edge": "gateway", "inventory": "inventory", "payment": "payment", "order": "order"}

// flagValue returns the value after --name in args.
func flagValue(args []string, name string) string {
	if i := slices.Index(args, "--"+name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// checkCompose returns every way the compose file falls short: one image
// built from deploy/Dockerfile, each process on its contract port, the
// services' databases on named volumes, order and the edge reaching the
// services by compose service name, the edge's config mounted and valid,
// and the edge's stop grace covering its drain.
func checkCompose(data []byte, readConfig func(string) ([]byte, error), ports map[string]int) []string {
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		return []string{err.Error()}
	}
	var bad []string
	for name, sub := range composeRoles {
		s, ok := c.Services[name]
		if !ok {
			bad = append(bad, fmt.Sprintf("service %s missing", name))
			continue
		}
		if s.Build.Dockerfile != "deploy/Dockerfile" {
			bad = append(bad, fmt.Sprintf("%s: build.dockerfile %q, want deploy/Dockerfile", name, s.Build.Dockerfile))
		}
		if len(s.Command) == 0 || s.Command[0] != sub {
			bad = append(bad, fmt.Sprintf("%s: command %v, want portico %s", name, s.Command, sub))
			continue
		}
		// Every process gets the one identity key ring from the host's
		// environment, required (${VAR:?...}): the edge signs with it, the
		// services verify, instead of trusting x-portico-* metadata.
		if v := s.Environment[identity.EnvKeys]; !strings.HasPrefix(v, "${"+identity.EnvKeys+":?") {
			bad = append(bad, fmt.Sprintf("%s: environment %s = %q, want the host's, required (${%s:?...})", name, identity.EnvKeys, v, identity.EnvKeys))
		}
		if sub == "gateway" {
			continue
		}
		if l := flagValue(s.Command, "listen"); l != fmt.Sprintf(":%d", ports[name]) {
			bad = append(bad, fmt.Sprintf("%s: --listen %q, want :%d on every interface", name, l, ports[name]))
		}
		db := flagValue(s.Command, "db")
		if !onNamedVolume(db, s.Volumes, c.Volumes) {
			bad = append(bad, fmt.Sprintf("%s: --db %q is not on a named volume (%v)", name, db, s.Volumes))
		}
	}
	order := c.Services["order"].Command
	for _, up := range []string{"inventory", "payment"} {
		if !byServiceName(flagValue(order, up), up, ports[up]) {
			bad = append(bad, fmt.Sprintf("order: --%s %q, want %s:%d by service name", up, flagValue(order, up), up, ports[up]))
		}
	}
	return append(bad, checkComposeEdge(c, readConfig, ports)...)
}

// checkComposeEdge: the mounted config parses as the edge would, listens
// on the edge's port and reaches each upstream by service name; the stop
// grace covers drain_delay + shutdown_grace.
func checkComposeEdge(c composeFile, readConfig func(string) ([]byte, error), ports map[string]int) []string {
	edge := c.Services["edge"]
	path := flagValue(edge.Command, "config")
	host := ""
	for _, v := range edge.Volumes {
		if src, dst, _ := strings.Cut(strings.TrimSuffix(v, ":ro"), ":"); dst == path {
			host = src
		}
	}
	if host == "" {
		return []string{fmt.Sprintf("edge: --config %q is not a mounted file (%v)", path, edge.Volumes)}
	}
	data, err := readConfig(host)
	if err != nil {
		return []string{err.Error()}
	}
	// Compose passes the host's key ring; a generated one stands in for it.
	old, had := os.LookupEnv(identity.EnvKeys)
	os.Setenv(identity.EnvKeys, identity.GenerateKey("compose-test").String())
	cfg, err := config.Parse(data, gateway.CheckRoutes)
	if had {
		os.Setenv(identity.EnvKeys, old)
	} else {
		os.Unsetenv(identity.EnvKeys)
	}
	if err != nil {
		return []string{fmt.Sprintf("edge config %s: %v", host, err)}
	}
	var bad []string
	if cfg.Identity.KeysEnv != identity.EnvKeys {
		bad = append(bad, fmt.Sprintf("edge config: identity.keys_env %q, want %s, the ring every process gets", cfg.Identity.KeysEnv, identity.EnvKeys))
	}
	if cfg.Listen != fmt.Sprintf(":%d", ports["edge"]) {
		bad = append(bad, fmt.Sprintf("edge config listen %q, want :%d", cfg.Listen, ports["edge"]))
	}
	if !slices.ContainsFunc(edge.Ports, func(p string) bool { return strings.HasSuffix(p, fmt.Sprintf(":%d", ports["edge"])) }) {
		bad = append(bad, fmt.Sprintf("edge: ports %v do not publish %d", edge.Ports, ports["edge"]))
	}
	for _, u := range cfg.Upstreams {
		if len(u.Addresses) != 1 || !byServiceName(u.Addresses[0], u.Name, ports[u.Name]) {
			bad = append(bad, fmt.Sprintf("edge config upstream %s: %v, want %s:%d by service name", u.Name, u.Addresses, u.Name, ports[u.Name]))
		}
	}
	grace, err := time.ParseDuration(edge.StopGracePeriod)
	if need := cfg.DrainDelay + cfg.ShutdownGrace; err != nil || grace <= need {
		bad = append(bad, fmt.Sprintf("edge: stop_grace_period %q, want more than drain_delay + shutdown_grace = %v", edge.StopGracePeriod, need))
	}
	longest := cfg.Routes.MaxTimeout
	for _, u := range cfg.Upstreams {
		longest = max(longest, u.Timeout)
	}
	for _, o := range cfg.Routes.Overrides {
		longest = max(longest, o.Timeout, o.MaxTimeout)
	}
	if cfg.ShutdownGrace < longest {
		bad = append(bad, fmt.Sprintf("edge config: shutdown_grace %v is shorter than the longest call %v", cfg.ShutdownGrace, longest))
	}
	for _, name := range []string{"inventory", "payment", "order"} {
		if g, err := time.ParseDuration(c.Services[name].StopGracePeriod); err != nil || g <= longest {
			bad = append(bad, fmt.Sprintf("%s: stop_grace_period %q, want more than the longest call %v", name, c.Services[name].StopGracePeriod, longest))
		}
	}
	return bad
}

// byServiceName: addr is name:port, with or without dns:///.
func byServiceName(addr, name string, port int) bool {
	return strings.TrimPrefix(addr, "dns:///") == fmt.Sprintf("%s:%d", name, port)
}

// onNamedVolume: path lies under a mount of a volume the file declares.
func onNamedVolume(path string, mounts []string, declared map[string]any) bool {
	for _, m := range mounts {
		src, dst, _ := strings.Cut(m, ":")
		dst, _, _ = strings.Cut(dst, ":")
		if _, named := declared[src]; named && strings.HasPrefix(path, dst+"/") {
			return true
		}
	}
	return false
}

// TestCompose checks deploy/compose.yaml (see checkCompose).
func TestCompose(t *testing.T) {
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkCompose(data, os.ReadFile, contractPorts(t)) {
		t.Error(p)
	}
}

// TestCheckComposeCatches: each way to break the compose wiring is caught.
func TestCheckComposeCatches(t *testing.T) {
	good, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, old, new, want string }{
		{"order by loopback", `"dns:///inventory:43101"`, `"127.0.0.1:43101"`, "order: --inventory"},
		{"wrong listen", `--listen, ":43102"`, `--listen, "127.0.0.1:43102"`, "payment: --listen"},
		{"db off volume", "--db, /var/lib/portico/inventory.db", "--db, /tmp/inventory.db", "inventory: --db"},
		{"anonymous volume", "order-data:/var/lib/portico]", "/var/lib/portico]", "order: --db"},
		{"config not mounted", "./compose.gateway.yaml:/etc/portico/gateway.yaml:ro", "./compose.gateway.yaml:/etc/gateway.yaml:ro", "not a mounted file"},
		{"short stop grace", "stop_grace_period: 20s", "stop_grace_period: 15s", "stop_grace_period"},
		{"not published", `ports: ["127.0.0.1:43100:43100"]`, `ports: []`, "do not publish"},
		{"missing service", "  payment:\n", "  payments:\n", "service payment missing"},
		{"service without the identity keys", "  inventory:\n    <<: *portico\n", "  inventory:\n    <<: *portico\n    environment: {}\n", "inventory: environment PORTICO_IDENTITY_KEYS"},
		{"identity keys optional", "${PORTICO_IDENTITY_KEYS:?", "${PORTICO_IDENTITY_KEYS:-", "environment PORTICO_IDENTITY_KEYS"},
		{"service stop grace under the longest call", "  stop_grace_period: 15s\n", "  stop_grace_period: 5s\n", "order: stop_grace_period"},
	}
	ports := contractPorts(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(good), tt.old) {
				t.Fatalf("compose.yaml lacks %q; update the case", tt.old)
			}
			data := strings.Replace(string(good), tt.old, tt.new, 1)
			got := strings.Join(checkCompose([]byte(data), os.ReadFile, ports), "\n")
			if !strings.Contains(got, tt.want) {
				t.Errorf("checkCompose(with %q) = %q, want a problem mentioning %q", tt.new, got, tt.want)
			}
		})
	}
	t.Run("edge config upstream by loopback", func(t *testing.T) {
		cfg, _ := os.ReadFile("compose.gateway.yaml")
		read := func(string) ([]byte, error) {
			return []byte(strings.Replace(string(cfg), "dns:///payment:43102", "127.0.0.1:43102", 1)), nil
		}
		got := strings.Join(checkCompose(good, read, ports), "\n")
		if !strings.Contains(got, "upstream payment") {
			t.Errorf("checkCompose = %q, want the payment upstream flagged", got)
		}
	})
	t.Run("edge signs nothing", func(t *testing.T) {
		cfg, _ := os.ReadFile("compose.gateway.yaml")
		read := func(string) ([]byte, error) {
			return []byte(strings.Replace(string(cfg), "keys_env: PORTICO_IDENTITY_KEYS", "keys_env: \"\"", 1)), nil
		}
		got := strings.Join(checkCompose(good, read, ports), "\n")
		if !strings.Contains(got, "identity.keys_env") {
			t.Errorf("checkCompose = %q, want the missing identity flagged", got)
		}
	})
	t.Run("edge grace under a route's timeout", func(t *testing.T) {
		cfg, _ := os.ReadFile("compose.gateway.yaml")
		read := func(string) ([]byte, error) {
			return []byte(strings.Replace(string(cfg), "max_timeout: 10s", "max_timeout: 20s", 1)), nil
		}
		got := strings.Join(checkCompose(good, read, ports), "\n")
		if !strings.Contains(got, "shorter than the longest call") {
			t.Errorf("checkCompose = %q, want the short shutdown_grace flagged", got)
		}
	})
}
