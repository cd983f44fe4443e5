// Command portico is Portico's one binary: the REST edge, the three services
// and a dev supervisor that runs all four. See `portico help`.
package main

import (
	"os"

	"github.com/portico-gateway/portico/cmd/portico/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
