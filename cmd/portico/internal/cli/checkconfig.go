package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
)

// adminTokenEnv names the environment variable whose bearer token
// check-config sends when --diff-against is an admin API URL.
const adminTokenEnv = "PORTICO_ADMIN_TOKEN"

// runCheckConfig loads FILE exactly as the gateway command does (every
// check short of dialing) and prints what it configures; with
// --diff-against, what would change against a file or a running edge's
// admin API (its /admin/config).
func runCheckConfig(ctx context.Context, e env, args []string) error {
	fs, _ := newFlags("check-config")
	against := fs.String("diff-against", "", "print what would change against `URL_OR_FILE`: a config file, or a running edge's admin URL (http://host:port/admin/config, token from $"+adminTokenEnv+")")
	if err := parseFlags(fs, args, 1); err != nil {
		return err
	}
	cfg, err := config.Load(fs.Arg(0), gateway.CheckRoutes)
	if err != nil {
		return err
	}
	for _, w := range gateway.Warnings(cfg) { // exit 0: the edge runs with these
		fmt.Fprintf(e.stderr, "%s: warning: %s\n", fs.Arg(0), w)
	}
	if err := gateway.WriteSummary(e.stdout, cfg); err != nil {
		return err
	}
	// The verdict is the last line, as before the summary existed.
	ok := func() error { fmt.Fprintf(e.stdout, "\n%s: ok\n", fs.Arg(0)); return nil }
	if *against == "" {
		return ok()
	}
	base, err := loadBase(ctx, *against)
	if err != nil {
		return fmt.Errorf("--diff-against %s: %w", *against, err)
	}
	diff := config.Diff(base, cfg)
	fmt.Fprintf(e.stdout, "\nchanges against %s (%d):\n", *against, len(diff))
	for _, d := range diff {
		fmt.Fprintf(e.stdout, "  %s\n", d)
	}
	if len(diff) == 0 {
		fmt.Fprintln(e.stdout, "  none")
	}
	return ok()
}

// loadBase reads the config to compare against: a URL's /admin/config
// answer (or YAML), else a file. It is decoded, not validated: it runs
// already, and its secrets may be redacted.
func loadBase(ctx context.Context, src string) (config.Config, error) {
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		return config.DecodeFile(src)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return config.Config{}, err
	}
	if tok := os.Getenv(adminTokenEnv); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return config.Config{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return config.Config{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return config.Config{}, fmt.Errorf("%s: %.200s", resp.Status, b)
	}
	var live struct {
		Config json.RawMessage `json:"config"`
	}
	if json.Unmarshal(b, &live) == nil && len(live.Config) > 0 {
		b = live.Config // JSON is YAML
	}
	return config.Decode(b)
}
