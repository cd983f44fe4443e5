// Package cli implements portico's subcommands. Each subcommand parses its
// flags into the owning package's Config and calls its Run; the only logic
// here is wiring and signal handling.
//
//	portico dev [--base-port N] [--data DIR] [--redis URL]  all four processes, embedded defaults
//	portico dev --replicas N --postgres URL --redis URL      a local cluster: N edges, N of each service
//	portico migrate --to URL [--data DIR]        copy the SQLite databases into PostgreSQL
//	portico gateway --config FILE                the REST/JSON edge
//	portico inventory|payment [--listen A] [--db P] [--admin-listen A]
//	portico order [--listen A] [--db P] [--admin-listen A] [--inventory A] [--payment A]
//	portico check-config [--diff-against U] FILE validate, summarize and diff a gateway config
//	portico describe [--json] [--reflect] FILE    the route table a gateway config serves
//	portico identity --keys F --service S --subject U [--role R]  an identity assertion for grpcurl
//	portico version                              module version, commit, Go version (also --version, -v)
//	portico completion bash|zsh|fish             a shell completion script
//	portico help [COMMAND]                       this list, or one command's flags
//
// Help goes to stdout and exits 0; a usage error goes to stderr and exits 2;
// a failure exits 1. SIGINT and SIGTERM stop every subcommand cleanly.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"google.golang.org/grpc/grpclog"

	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/suggest"
)

// env is what every subcommand gets.
type env struct {
	stdout, stderr io.Writer
}

type command struct {
	name     string
	synopsis string // arguments after the name, for the usage line
	summary  string
	run      func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	return []command{
		{"dev", "[--base-port N] [--data DIR] [--redis URL] [--replicas N --postgres URL]", "run inventory, payment, order and the edge with embedded defaults, or a local cluster of N of each", runDev},
		{"gateway", "--config FILE", "run the REST/JSON edge", runGateway},
		{"inventory", "[--listen ADDR] [--db PATH] [--admin-listen ADDR]", "run the inventory service", runInventory},
		{"payment", "[--listen ADDR] [--db PATH] [--admin-listen ADDR]", "run the payment service", runPayment},
		{"order", "[--listen ADDR] [--db PATH] [--admin-listen ADDR] [--inventory ADDR] [--payment ADDR]", "run the order service", runOrder},
		{"migrate", "--to URL [--data DIR] [--only SERVICE]", "copy the services' SQLite databases into PostgreSQL (idempotent)", runMigrate},
		{"check-config", "[--diff-against URL_OR_FILE] FILE", "validate a gateway config file, summarize it and diff it", runCheckConfig},
		{"describe", "[--json] [--reflect] FILE", "list the route table a gateway config serves: route, RPC, upstream, roles, limit and shed groups, timeout; upstreams with TLS", runDescribe},
		{"identity", "--keys FILE --service SVC --subject S [--role R]", "print an identity assertion for calling a service directly", runIdentity},
		{"version", "", "print the module version, commit and Go version (also portico --version)", runVersion},
		{"completion", "bash|zsh|fish", "print a shell completion script, e.g. source <(portico completion bash)", runCompletion},
	}
}

// commandNames lists every command, help included.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return append(names, "help")
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// Main runs the subcommand named by args[0] and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return help(args[1:], stdout, stderr)
	case "-v", "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "portico: unknown command %q%s\n\n", args[0], suggest.DidYouMean(args[0], commandNames()))
		usage(stderr)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return exitCode(c, c.run(ctx, env{stdout, stderr}, args[1:]), stdout, stderr)
}

// exitCode reports err, the result of running c, and returns the exit code.
func exitCode(c command, err error, stdout, stderr io.Writer) int {
	var h *helpRequest
	var u *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &h):
		commandHelp(stdout, c, h.fs)
		return exitOK
	case errors.As(err, &u):
		fmt.Fprintf(stderr, "portico %s: %v\nrun 'portico help %s' for usage\n", c.name, u.err, c.name)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "portico %s: %v\n", c.name, err)
		return exitFail
	}
}

// help answers `portico help [COMMAND]`: the command list, or one
// command's help, on stdout.
func help(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		usage(stdout)
		return exitOK
	case 1:
	default:
		fmt.Fprintln(stderr, "portico help: name one command at most")
		return exitUsage
	}
	if args[0] == "help" {
		usage(stdout)
		return exitOK
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "portico help: unknown command %q%s\n\n", args[0], suggest.DidYouMean(args[0], commandNames()))
		usage(stderr)
		return exitUsage
	}
	// Every command parses its flags before doing anything else, so
	// asking it for --help is side-effect free.
	return exitCode(c, c.run(context.Background(), env{io.Discard, io.Discard}, []string{"--help"}), stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: portico <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-13s %s\n", "help", "this list; 'portico help COMMAND' shows a command's flags")
}

// commandHelp prints one command's usage line, summary and flags, spelt
// with two dashes as the README does (the flag package accepts both).
func commandHelp(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: portico %s %s\n\n%s\n", c.name, c.synopsis, c.summary)
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintln(w, "\nflags:")
			first = false
		}
		kind, text := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			text += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, text)
	})
}

// helpRequest is what parseFlags returns for -h or --help: Main prints the
// command's help to stdout and exits 0.
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string { return "help requested" }

// usageError is a bad command line: Main prints it to stderr and exits 2.
type usageError struct{ err error }

func (u *usageError) Error() string { return u.err.Error() }

// newFlags returns a silent flag set (parseFlags reports its errors) with
// the --log-level and --log-format flags.
func newFlags(name string) (*flag.FlagSet, *logFlags) {
	fs := flag.NewFlagSet("portico "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	lf := &logFlags{}
	fs.StringVar(&lf.level, "log-level", "info", "log `LEVEL`: debug, info, warn or error")
	fs.StringVar(&lf.format, "log-format", "", "log `FORMAT`: json (one JSON record a line), or text (one line a record, for a person at a terminal); default json, and text for portico dev when its output is a terminal")
	return fs, lf
}

// logFlags are every command's log flags.
type logFlags struct {
	level  string
	format string // "" means the command's default
}

// output is where the log goes: stdout as JSON, or rendered by
// logging.Console when --log-format is text, or when it is unset and
// textDefault holds.
func (lf *logFlags) output(e env, textDefault bool) (io.Writer, error) {
	switch lf.format {
	case "json":
		return e.stdout, nil
	case "text":
		return logging.Console(e.stdout), nil
	case "":
		if textDefault {
			return logging.Console(e.stdout), nil
		}
		return e.stdout, nil
	}
	return nil, &usageError{fmt.Errorf("--log-format %q: want text or json", lf.format)}
}

// parseFlags parses args into fs and allows want positional arguments,
// turning --help into a *helpRequest and any mistake into a *usageError.
func parseFlags(fs *flag.FlagSet, args []string, want int) error {
	return parseFlagsRange(fs, args, want, want)
}

// parseFlagsRange is parseFlags for least to most arguments.
func parseFlagsRange(fs *flag.FlagSet, args []string, least, most int) error {
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return &helpRequest{fs}
	} else if err != nil {
		return &usageError{withFlagHint(err, fs)}
	}
	if fs.NArg() > most {
		return &usageError{fmt.Errorf("unexpected argument %q", fs.Arg(most))}
	}
	if fs.NArg() < least {
		return &usageError{fmt.Errorf("want %d argument(s), got %d", least, fs.NArg())}
	}
	return nil
}

// withFlagHint adds "did you mean --X?" to the flag package's error for an
// unknown flag.
func withFlagHint(err error, fs *flag.FlagSet) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if c := suggest.Closest(strings.TrimPrefix(name, "-"), names); c != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, c)
	}
	return err
}

// newLogger builds the process logger for service at the named level,
// writing to w (lf.output) through a Writer that buffers access lines as
// logging.BufferEnv says (logBuffer); close the Writer when the process
// stops, after its last line.
func newLogger(w io.Writer, service, level string) (*slog.Logger, *logging.Writer, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	size, err := logBuffer(os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	out, err := logging.NewWriter(w, size)
	if err != nil {
		return nil, nil, err
	}
	log := logging.New(out, service, l)
	// grpc-go and grpc-gateway log through grpclog, whose default writes
	// plain text to stderr: one stream of JSON records instead. grpclog's
	// logger is set once per process (setting it again races with gRPC's
	// goroutines); each subcommand run swaps the logger it writes to.
	grpcLog.Store(log.With("component", "grpc"))
	procLog.Store(log)
	grpcLogOnce.Do(func() {
		grpclog.SetLoggerV2(logging.GRPCLoggerFunc(grpcLog.Load))
		logging.SetOTelLogger(procLog.Load)  // the OpenTelemetry SDK's own reports, likewise
		logging.SetRedisLogger(procLog.Load) // and go-redis's own lines
	})
	return log, out, nil
}

// maxLogBuffer bounds logging.BufferEnv.
const maxLogBuffer = 16 << 20

// logBuffer is the log buffer logging.BufferEnv asks for, in bytes:
// logging.DefaultBuffer when it is unset or empty, 0 for none.
func logBuffer(getenv func(string) string) (int, error) {
	v := getenv(logging.BufferEnv)
	if v == "" {
		return logging.DefaultBuffer, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxLogBuffer {
		return 0, fmt.Errorf("%s=%q: want a byte count from 0 (no buffer) to %d", logging.BufferEnv, v, maxLogBuffer)
	}
	return n, nil
}

var (
	grpcLog, procLog atomic.Pointer[slog.Logger]
	grpcLogOnce      sync.Once
)
