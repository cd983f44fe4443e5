// Package cli implements portico's subcommands. Each subcommand parses its
// flags into the owning package's Config and calls its Run; the only logic
// here is wiring and signal handling.
//
//	portico dev [--base-port N] [--data DIR]     all four processes, embedded defaults
//	portico gateway --config FILE                the REST/JSON edge
//	portico inventory|payment [--listen A] [--db P]
//	portico order [--listen A] [--db P] [--inventory A] [--payment A]
//	portico check-config FILE                    validate a gateway config
//
// SIGINT and SIGTERM stop every subcommand cleanly.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"

	"github.com/portico-gateway/portico/internal/logging"
)

// env is what every subcommand gets.
type env struct {
	stdout, stderr io.Writer
}

type command struct {
	name, usage string
	run         func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	return []command{
		{"dev", "run inventory, payment, order and the edge with embedded defaults", runDev},
		{"gateway", "run the REST/JSON edge: --config FILE", runGateway},
		{"inventory", "run the inventory service", runInventory},
		{"payment", "run the payment service", runPayment},
		{"order", "run the order service", runOrder},
		{"check-config", "validate a gateway config file: check-config FILE", runCheckConfig},
	}
}

// Main runs the subcommand named by args[0] and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		return 2
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		err := c.run(ctx, env{stdout, stderr}, args[1:])
		if errors.Is(err, flag.ErrHelp) {
			return 2
		}
		if err != nil {
			fmt.Fprintf(stderr, "portico %s: %v\n", c.name, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "portico: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: portico <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.usage)
	}
}

// newFlags returns a flag set that reports errors to e.stderr and a
// --log-level flag.
func newFlags(e env, name string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("portico "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	lvl := fs.String("log-level", "info", "log level: debug, info, warn or error")
	return fs, lvl
}

// newLogger builds the process logger for service at the named level.
func newLogger(e env, service, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return logging.New(e.stdout, service, l), nil
}

// noArgs rejects positional arguments after the flags.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
