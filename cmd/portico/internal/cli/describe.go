package cli

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/portico-gateway/portico/gateway"
)

// runDescribe prints the route table a gateway config makes the edge
// serve (route, RPC, upstream, policy roles, limit and shed groups,
// timeout) and its upstreams with their TLS, descriptor-loaded services
// included, without dialing any upstream unless --reflect asks for the
// routes of server-reflection upstreams; --json prints /admin/routes's
// rows instead. The file is the argument, as check-config's, or --config.
func runDescribe(_ context.Context, e env, args []string) error {
	fs, _ := newFlags("describe")
	path := fs.String("config", "", "gateway config `FILE` (YAML); or give FILE as the argument")
	asJSON := fs.Bool("json", false, "print JSON (the admin API's /admin/routes rows) instead of a table")
	reflect := fs.Bool("reflect", false, "dial upstreams with reflection: true (as the edge does at start, each within the reflection timeout) to list their routes too")
	if err := parseFlagsRange(fs, args, 0, 1); err != nil {
		return err
	}
	file := *path
	switch {
	case fs.NArg() == 1 && file != "":
		return &usageError{errors.New("give the config FILE once: as the argument or with --config")}
	case fs.NArg() == 1:
		file = fs.Arg(0)
	case file == "":
		return &usageError{errors.New("want the gateway config FILE (as the argument, or --config FILE)")}
	}
	t, err := gateway.Describe(file, *reflect)
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
