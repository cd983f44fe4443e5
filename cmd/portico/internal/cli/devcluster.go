package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/portico-gateway/portico/cmd/portico/internal/supervisor"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/internal/cpushare"
	"github.com/portico-gateway/portico/internal/pgdb"
)

// A local cluster (`portico dev --replicas N --postgres URL --redis URL`):
// replica k (0 to N-1) takes the ports base+10k to base+10k+9 with the
// layout of a single dev set: edge +0, inventory +1, payment +2, order +3,
// admin listeners +4 to +7, +8 and +9 spare. Every order replica reaches
// every inventory and payment replica through an address list, every edge
// lists every replica of each service as its upstream addresses, and all
// edges share the Redis at --redis.
const (
	// replicaStride is the port distance between two replicas' sets.
	replicaStride = 10
	// maxReplicas bounds --replicas: a local cluster, not a fleet.
	maxReplicas = 9
)

// cluster is the validated shape of a dev run.
type cluster struct {
	base, replicas int
	postgres       string // "" means SQLite files under data
	redis          string
	keys           string // the run's identity keys file, named in every edge's config
}

// validate checks the flag combination.
func (c cluster) validate() error {
	switch {
	case c.replicas < 1 || c.replicas > maxReplicas:
		return fmt.Errorf("--replicas %d: want 1-%d", c.replicas, maxReplicas)
	case c.replicas > 1 && c.postgres == "":
		return errors.New("--replicas above 1 needs --postgres URL: replicas on SQLite files would be diverging databases")
	case c.postgres != "" && !pgdb.IsURL(c.postgres):
		return fmt.Errorf("--postgres %q: want a postgres:// URL", redactURL(c.postgres))
	case c.base < 1 || c.base+replicaStride*(c.replicas-1)+9 > 65535:
		return fmt.Errorf("--base-port %d with %d replicas: every port up to base+%d must be at most 65535",
			c.base, c.replicas, replicaStride*(c.replicas-1)+9)
	}
	return nil
}

// redactURL drops a URL's password, for error messages.
func redactURL(s string) string {
	if i, j := strings.Index(s, "://"), strings.LastIndex(s, "@"); i >= 0 && j > i {
		if k := strings.Index(s[i+3:j], ":"); k >= 0 {
			return s[:i+3+k] + ":xxxxx" + s[j:]
		}
	}
	return s
}

// port returns replica k's port at offset off.
func (c cluster) port(k, off int) int { return c.base + replicaStride*k + off }

func (c cluster) addr(k, off int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port(k, off)))
}

// addrs returns the address of the service at offset off on every replica.
func (c cluster) addrs(off int) []string {
	out := make([]string, c.replicas)
	for k := range out {
		out[k] = c.addr(k, off)
	}
	return out
}

// name tags replica k's child: the plain name for a single set, so plain
// `portico dev` is unchanged, name-k in a cluster.
func (c cluster) name(service string, k int) string {
	if c.replicas == 1 {
		return service
	}
	return service + "-" + strconv.Itoa(k)
}

// db is the --db flag of service: its SQLite file, or none on PostgreSQL,
// whose URL (it may hold a password) reaches the children in $PORTICO_DB
// (env), never in a command line that ps shows to every user.
func (c cluster) db(data, service string) []string {
	if c.postgres != "" {
		return nil
	}
	return []string{"--db", filepath.Join(data, service+".db")}
}

// env is environ plus, on PostgreSQL, $PORTICO_DB: the URL every service
// replica reads when it has no --db; and with replicas, each of the n
// children's share of the cores (cpushare), unless environ sets
// GOMAXPROCS: N sets on one host share it as containers share a node.
func (c cluster) env(environ []string, n int) []string {
	env := slices.Clip(environ)
	if c.postgres != "" {
		env = append(env, envDB+"="+c.postgres)
	}
	if c.replicas > 1 {
		if kv, ok := cpushare.Var(environ, n); ok {
			env = append(env, kv)
		}
	}
	return env
}

// children returns every service replica, then every edge (configs[k] is
// edge k's config file).
func (c cluster) children(data, level string, configs []string) []supervisor.Child {
	lv := "--log-level=" + level
	inv, pay := strings.Join(c.addrs(1), ","), strings.Join(c.addrs(2), ",")
	var out []supervisor.Child
	for k := range c.replicas {
		out = append(out,
			supervisor.Child{Name: c.name("inventory", k), Args: slices.Concat([]string{"inventory", lv, "--listen", c.addr(k, 1)}, c.db(data, "inventory"), []string{"--admin-listen", c.addr(k, 5)})},
			supervisor.Child{Name: c.name("payment", k), Args: slices.Concat([]string{"payment", lv, "--listen", c.addr(k, 2)}, c.db(data, "payment"), []string{"--admin-listen", c.addr(k, 6)})})
	}
	for k := range c.replicas {
		out = append(out, supervisor.Child{Name: c.name("order", k), Args: slices.Concat([]string{"order", lv, "--listen", c.addr(k, 3)},
			c.db(data, "order"), []string{"--admin-listen", c.addr(k, 7), "--inventory", inv, "--payment", pay})})
	}
	for k := range c.replicas {
		out = append(out, supervisor.Child{Name: c.name("gateway", k), Args: []string{"gateway", lv, "--config", configs[k]}})
	}
	return out
}

// start writes every edge's config (edge 0's to gateway.dev.yaml, edge k's
// to gateway.dev.k.yaml) and returns the children to supervise.
func (c cluster) start(data, level string, l *slog.Logger) ([]supervisor.Child, error) {
	if c.replicas > 1 && c.redis == "" {
		l.Warn("--replicas without --redis: each edge keeps its own rate limits, bans and nonces")
	}
	configs := make([]string, c.replicas)
	for k := range c.replicas {
		configs[k] = filepath.Join(data, "gateway.dev.yaml")
		if k > 0 {
			configs[k] = filepath.Join(data, fmt.Sprintf("gateway.dev.%d.yaml", k))
		}
		if err := writeEdgeConfig(configs[k], c.edgeConfig(k)); err != nil {
			return nil, err
		}
	}
	l.Info("local cluster", "replicas", c.replicas, "edges", strings.Join(c.addrs(0), ","),
		"postgres", redactURL(c.postgres), "redis", c.redis)
	return c.children(data, level, configs), nil
}

// edgeConfig is edge k's config: the dev profile on base+10k whose
// upstreams list every replica, sharing the cluster's Redis.
func (c cluster) edgeConfig(k int) config.Config {
	cfg := config.Dev(c.port(k, 0))
	for i := range cfg.Upstreams {
		switch cfg.Upstreams[i].Name {
		case "inventory":
			cfg.Upstreams[i].Addresses = c.addrs(1)
		case "payment":
			cfg.Upstreams[i].Addresses = c.addrs(2)
		case "order":
			cfg.Upstreams[i].Addresses = c.addrs(3)
		}
	}
	cfg.Redis.URL = c.redis
	cfg.Identity.KeysFile = c.keys
	return cfg
}
