package cli

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/portico-gateway/portico/gateway"
)

func runGateway(ctx context.Context, e env, args []string) error {
	fs, lvl := newFlags(e, "gateway")
	path := fs.String("config", "", "gateway config file (YAML); required")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *path == "" {
		return errors.New("--config FILE is required")
	}
	cfg, err := loadGatewayConfig(*path)
	if err != nil {
		return err
	}
	l, err := newLogger(e, "gateway", *lvl)
	if err != nil {
		return err
	}
	var ups upstreamSet
	opts, err := gatewayOptions(l, &ups)
	if err != nil {
		return err
	}
	go reloadOnHangup(ctx, *path, cfg, &ups, l)
	return serveGateway(ctx, cfg, opts...)
}

func serveGateway(ctx context.Context, cfg gateway.Config, opts ...gateway.Option) error {
	srv, err := gateway.New(ctx, cfg, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	return srv.Serve(ctx, lis)
}

func runCheckConfig(_ context.Context, e env, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: portico check-config FILE")
	}
	if _, err := loadGatewayConfig(args[0]); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: ok\n", args[0])
	return nil
}
