package cli

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/portico-gateway/portico/gateway"
)

// runDescribe prints the route table a gateway config makes the edge
// serve (route, RPC, upstream, policy roles, limit and shed groups,
// timeout), descriptor-loaded services included, without dialing any
// upstream; --json prints /admin/routes's shape instead.
func runDescribe(_ context.Context, e env, args []string) error {
	fs, _ := newFlags("describe")
	path := fs.String("config", "", "gateway config `FILE` (YAML); required")
	asJSON := fs.Bool("json", false, "print JSON (the admin API's /admin/routes rows) instead of a table")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if *path == "" {
		return &usageError{errors.New("--config FILE is required")}
	}
	t, err := gateway.Describe(*path)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	}
	return t.Write(e.stdout)
}
