package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/portico-gateway/portico/gateway"
)

func runGateway(ctx context.Context, e env, args []string) error {
	// Take SIGHUP before anything else, so an early one never kills the
	// process; reloads start once every upstream is dialled.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	fs, lvl := newFlags("gateway")
	path := fs.String("config", "", "gateway config `FILE` (YAML); required")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if *path == "" {
		return &usageError{errors.New("--config FILE is required")}
	}
	cfg, err := gateway.LoadConfig(*path)
	if err != nil {
		return err
	}
	l, err := newLogger(e, "gateway", *lvl)
	if err != nil {
		return err
	}
	opts, ups, err := gatewayOptions(l)
	if err != nil {
		return err
	}
	defer ups.Close()
	srv, err := gateway.New(ctx, cfg, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	rctx, stopReload := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); reloadOnHangup(rctx, hup, *path, cfg, ups, srv, l) }()
	defer func() { stopReload(); <-done }()
	return srv.Serve(ctx, lis)
}

func runCheckConfig(_ context.Context, e env, args []string) error {
	fs, _ := newFlags("check-config")
	if err := parseFlags(fs, args, 1); err != nil {
		return err
	}
	cfg, err := gateway.LoadConfig(fs.Arg(0))
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings() { // exit 0: the edge runs with these
		fmt.Fprintf(e.stderr, "%s: warning: %s\n", fs.Arg(0), w)
	}
	fmt.Fprintf(e.stdout, "%s: ok\n", fs.Arg(0))
	return nil
}
