package cli

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// runGateway is `portico gateway --config FILE`: the edge from one config
// file, reloaded on SIGHUP, the file watch and the admin API, and stopped
// gracefully on SIGTERM or SIGINT.
func runGateway(ctx context.Context, e env, args []string) error {
	// Take SIGHUP before anything else, so an early one never kills the
	// process; reloads start once every upstream is dialled.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	fs, lf := newFlags("gateway")
	path := fs.String("config", "", "gateway config `FILE` (YAML); required")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if *path == "" {
		return &usageError{errors.New("--config FILE is required")}
	}
	cfg, err := config.Load(*path, gateway.CheckRoutes)
	if err != nil {
		return err
	}
	w, err := lf.output(e, false)
	if err != nil {
		return err
	}
	l, out, err := newLogger(w, "gateway", lf.level)
	if err != nil {
		return err
	}
	defer out.Close() // last: writes the access lines still buffered
	gcDefaults(os.Getenv, cgroupMemoryMax)
	sampling := logging.NewSampler(cfg.LogSampling())
	l = sampling.Logger(l)
	tp, err := telemetry.New(ctx, cfg.Tracing())
	if err != nil {
		return err
	}
	defer flush(tp, l)
	opts, ups, err := gatewayOptions(l, cfg, tp, *path)
	if err != nil {
		return err
	}
	defer ups.Close()
	srv, err := gateway.New(ctx, cfg, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	var bg sync.WaitGroup
	rctx, stop := context.WithCancel(ctx)
	defer func() { stop(); bg.Wait() }()
	changed := make(chan struct{}, 1)
	bg.Go(func() { reloadLoop(rctx, hup, changed, srv, l) })
	bg.Go(func() { watchConfig(rctx, *path, srv, changed) })
	bg.Go(func() { srv.WatchIdentityKeys(rctx, keyWatchInterval) })
	bg.Go(func() { followTelemetry(rctx, srv, tp, sampling, l) })
	// listen and admin_listen (the admin API stays up until the edge has
	// drained, so /healthz/ready shows the drain) follow reloads.
	return srv.ListenAndServe(ctx)
}

// telemetryFollowed, if set, is called each time followTelemetry has
// applied the live config (tests).
var telemetryFollowed func()

// followTelemetry applies each config the edge applies to what the process
// runs outside it: trace sampling and exporter, and log sampling. It
// returns when ctx ends.
func followTelemetry(ctx context.Context, srv *gateway.Server, tp *telemetry.Provider, s *logging.Sampler, l *slog.Logger) {
	next := srv.Applied()
	for {
		cfg := srv.Config()
		s.Set(cfg.LogSampling())
		if err := tp.Apply(ctx, cfg.Tracing()); err != nil {
			l.Error("telemetry settings not applied; keeping the running ones", "err", err.Error())
		}
		if telemetryFollowed != nil {
			telemetryFollowed()
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
			next = srv.Applied()
		}
	}
}
