package balance

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"
)

// DefaultDNSRefresh is how often a DNS upstream is re-resolved;
// MinDNSRefresh is the shortest interval allowed.
const (
	DefaultDNSRefresh = 30 * time.Second
	MinDNSRefresh     = time.Second
)

// LookupFunc resolves a host name to IP addresses (net.Resolver.LookupHost).
type LookupFunc func(ctx context.Context, host string) ([]string, error)

// ParseDNSTarget splits a "dns:///host:port" target into host and port; ok
// is false for any other target. An authority ("dns://8.8.8.8/...") is not
// supported: the system resolver is used.
func ParseDNSTarget(target string) (host, port string, ok bool) {
	rest, found := strings.CutPrefix(target, "dns:///")
	if !found {
		return "", "", false
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil || host == "" || port == "" {
		return "", "", false
	}
	return host, port, true
}

// Resolve looks host up and returns its addresses as sorted "ip:port".
func Resolve(ctx context.Context, lookup LookupFunc, host, port string) ([]string, error) {
	ips, err := lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	addrs := make([]string, 0, len(ips))
	for _, ip := range ips {
		addrs = append(addrs, net.JoinHostPort(ip, port))
	}
	slices.Sort(addrs)
	return slices.Compact(addrs), nil
}

// Refresher re-resolves a DNS name every interval and moves a Resolver to
// the answer, so instances added behind the name are used without waiting
// for a connection to fail (grpc-go's own dns resolver only re-resolves
// then). A failed or empty lookup keeps the current addresses.
type Refresher struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// StartRefresh starts resolving host:port into r at once and then every
// interval, until Stop. It starts one goroutine.
func StartRefresh(r *Resolver, host, port string, interval time.Duration, lookup LookupFunc, l *slog.Logger) *Refresher {
	ctx, cancel := context.WithCancel(context.Background())
	f := &Refresher{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		refresh(ctx, r, host, port, lookup, l)
		for {
			t := time.NewTimer(interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			refresh(ctx, r, host, port, lookup, l)
		}
	}()
	return f
}

func refresh(ctx context.Context, r *Resolver, host, port string, lookup LookupFunc, l *slog.Logger) {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := Resolve(lctx, lookup, host, port)
	if err != nil || len(addrs) == 0 {
		if ctx.Err() == nil {
			l.Warn("dns refresh failed; keeping the current addresses", "upstream", r.name, "host", host, "err", errText(err))
		}
		return
	}
	if slices.Equal(addrs, r.configured()) {
		return
	}
	if err := r.SetAddresses(addrs); err != nil {
		l.Warn("dns refresh: bad addresses", "upstream", r.name, "err", err.Error())
		return
	}
	l.Info("dns refresh: addresses changed", "upstream", r.name, "addresses", strings.Join(addrs, ","))
}

// Stop ends the refresh loop and waits for it.
func (f *Refresher) Stop() {
	f.cancel()
	<-f.done
}

func errText(err error) string {
	if err == nil {
		return "no addresses"
	}
	return err.Error()
}

// configured returns the full address list (ejected ones included), sorted.
func (r *Resolver) configured() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.addrs)
	slices.Sort(out)
	return out
}
