package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/internal/boundedfile"
)

// Sources of a config change, as the audit and the version history name
// them.
const (
	sourceStart    = "start"
	SourceSignal   = "signal"   // SIGHUP
	SourceFile     = "file"     // the config file changed (WatchFile)
	SourceAdmin    = "admin"    // POST /admin/reload
	SourceRollback = "rollback" // POST /admin/rollback
)

// Version names one applied config.
type Version struct {
	// ID is the first 12 hex digits of the SHA-256 of the config's
	// canonical YAML (defaults applied), so the same settings are the same
	// version however the file is written.
	ID string `json:"id"`
	// Applied is when the config went live; Source is what applied it.
	Applied time.Time `json:"applied"`
	Source  string    `json:"source"`
}

// versionOf returns cfg's Version with only the ID set.
func versionOf(cfg config.Config) Version {
	b, err := yaml.Marshal(cfg)
	if err != nil { // a Config always marshals; never an empty ID
		b = fmt.Appendf(nil, "%#v", cfg)
	}
	if l := cfg.Loaded(); l != nil { // the descriptors are part of what is applied
		b = append(b, l.Digest()...)
	}
	sum := sha256.Sum256(b)
	return Version{ID: hex.EncodeToString(sum[:6])}
}

// ReloadResult is what Reload, ReloadFile and Rollback report.
type ReloadResult struct {
	// Version is the config live afterwards.
	Version Version `json:"version"`
	// Previous is the version that was live before.
	Previous string `json:"previous"`
	// Changed is false when the new config equals the live one: nothing
	// was swapped.
	Changed bool `json:"changed"`
	// Diff lists what changed, one "+ path: value", "- path: value" or
	// "~ path: old -> new" line each, secrets redacted.
	Diff []string `json:"diff"`
}

// ErrUnknownVersion is Rollback's error for a version the edge does not
// keep.
var ErrUnknownVersion = errors.New("gateway: no such kept config version")

// Reload validates cfg and, when it is valid, swaps it in atomically:
// requests in flight finish on the config they started with, new ones get
// cfg. Upstream connections whose settings are unchanged carry over with
// their breaker, ejection and connection state; the others drain and close
// once no request uses them. Every field applies: a changed listen or
// admin_listen is opened before the swap and the old listener drains, a
// changed http section applies to new connections, a changed tls section
// to new handshakes (listeners.go). An invalid cfg, or an address that
// cannot be bound, changes nothing; it is logged,
// counted (portico_gateway_config_reloads_total{result="rejected"}) and audited.
// source names the trigger for the audit (SourceSignal, ...).
func (s *Server) Reload(ctx context.Context, cfg config.Config, source string) (ReloadResult, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	return s.reloadLocked(ctx, cfg.WithDefaults(), source)
}

func (s *Server) reloadLocked(ctx context.Context, cfg config.Config, source string) (ReloadResult, error) {
	live := s.snap.Load()
	if s.closed {
		return ReloadResult{}, errors.New("gateway: closed")
	}
	// The checks New runs. Descriptors are read again (a file, or the
	// upstream's reflection) unless cfg is a kept version, which brings
	// its own back. When that fails the live snapshot, descriptors and
	// all, stays.
	cfg, err := cfg.Check(routeCheck(ctx, s.o.registrations))
	if err != nil {
		return ReloadResult{}, s.reject(ctx, live, source, err)
	}
	res := ReloadResult{Previous: live.version.ID}
	if v := versionOf(cfg); v.ID == live.version.ID {
		res.Version = live.version
		s.reloads.result("unchanged")
		return res, nil
	}
	lc, err := s.prepareListeners(cfg) // bind first: a busy address rejects the reload
	if err != nil {
		return ReloadResult{}, s.reject(ctx, live, source, fmt.Errorf("gateway: reload: %w", err))
	}
	next, err := s.build(ctx, cfg, live)
	if err != nil {
		lc.abort()
		return ReloadResult{}, s.reject(ctx, live, source, err)
	}
	res.Diff = append(config.Diff(live.cfg, cfg), routeDiff(live.table, next.table)...)
	s.commit(next, source)
	s.applyListeners(lc, cfg)
	live.release(s) // drains: in-flight requests keep it until they finish
	res.Version, res.Changed = next.version, true
	s.audit(ctx, slog.LevelInfo, "applied", next.version, live.version.ID, res.Diff, nil)
	return res, nil
}

// commit makes sn the live snapshot, records its version and tells
// whoever waits on Applied.
func (s *Server) commit(sn *snapshot, source string) {
	s.nonces.commit(sn.nonceSet)
	s.copies.setMax(staleMaxBytes(sn.cfg.Stale))
	sn.version.Applied, sn.version.Source = time.Now().UTC(), source
	s.history.add(sn.version, sn.cfg)
	s.snap.Store(sn)
	s.reloads.applied(sn.version)
	if s.applied != nil {
		close(s.applied)
	}
	s.applied = make(chan struct{})
}

// Applied returns a channel closed when the next config is applied (a
// reload or rollback), for what the process runs outside the edge from
// its config (the config file's watch interval).
func (s *Server) Applied() <-chan struct{} {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	return s.applied
}

// reject counts, logs and audits a config that was not applied, and
// returns err.
func (s *Server) reject(ctx context.Context, live *snapshot, source string, err error) error {
	s.reloads.result("rejected")
	s.log.Error("reload rejected; keeping the running config", "source", source, "err", err.Error())
	s.audit(ctx, slog.LevelWarn, "rejected", Version{Applied: time.Now().UTC(), Source: source}, live.version.ID, nil, err)
	return err
}

// ReloadFile re-reads the config file (WithConfigFile) exactly as the
// gateway command loads it, then Reloads it. A file that does not load is
// rejected like an invalid config.
func (s *Server) ReloadFile(ctx context.Context, source string) (ReloadResult, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if s.o.configPath == "" {
		return ReloadResult{}, errors.New("gateway: no config file to reload (WithConfigFile)")
	}
	var sum [32]byte
	if b, err := boundedfile.Read(s.o.configPath, config.MaxFileBytes); err == nil {
		sum = sha256.Sum256(b)
	}
	if live := s.snap.Load(); source == SourceFile && sum != ([32]byte{}) && sum == s.fileSum {
		// The watch reports content a signal or the admin API read
		// already; applying it again would undo a rollback made since.
		s.reloads.result("unchanged")
		return ReloadResult{Version: live.version, Previous: live.version.ID}, nil
	}
	s.fileSum = sum
	cfg, err := config.Load(s.o.configPath, CheckRoutes)
	if err != nil {
		return ReloadResult{}, s.reject(ctx, s.snap.Load(), source, err)
	}
	return s.reloadLocked(ctx, cfg, source)
}

// Rollback applies a kept version again: id, or when id is empty the one
// applied before the live one. It is a Reload with source
// SourceRollback, audited the same way.
func (s *Server) Rollback(ctx context.Context, id string) (ReloadResult, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	cfg, ok := s.history.find(id, s.snap.Load().version.ID)
	if !ok {
		return ReloadResult{}, fmt.Errorf("%w: %q", ErrUnknownVersion, id)
	}
	return s.reloadLocked(ctx, cfg, SourceRollback)
}

// Versions returns the kept versions, newest (the live one) first.
func (s *Server) Versions() []Version { return s.history.versions() }

// AuditEntry is one audit record: a config applied or rejected.
type AuditEntry struct {
	Event    string    `json:"event"` // "applied" or "rejected"
	Version  string    `json:"version,omitempty"`
	Previous string    `json:"previous"`
	Time     time.Time `json:"time"`
	Source   string    `json:"source"`
	// By is the subject of the admin API caller who asked for the change
	// (POST /admin/reload, /admin/rollback); empty for a signal, the file
	// watch or a call from Go.
	By string `json:"by,omitempty"`
	// Added, Removed and Changed count Diff's lines by kind, as the log
	// line does.
	Added   int      `json:"added"`
	Removed int      `json:"removed"`
	Changed int      `json:"changed"`
	Diff    []string `json:"diff,omitempty"`
	// Error is the log line's "err": the admin API names error fields
	// "error" (as /admin/limits' bans do), the logs "err".
	Error string `json:"error,omitempty"`
}

// Audit returns the latest audit records, newest first.
func (s *Server) Audit() []AuditEntry { return s.history.auditLog() }

// audit writes one audit line ("config audit") and keeps it for the admin
// API. The caller's subject comes from ctx: an admin API request's.
func (s *Server) audit(ctx context.Context, level slog.Level, event string, v Version, prev string, diff []string, err error) {
	e := AuditEntry{Event: event, Version: v.ID, Previous: prev, Time: v.Applied, Source: v.Source, By: actor(ctx), Diff: diff}
	e.Added, e.Removed, e.Changed = diffCounts(diff)
	if err != nil {
		e.Error = err.Error()
	}
	s.history.addAudit(e)
	// No "time" attribute: slog stamps the record's own, and a second
	// "time" key made the JSON line ambiguous. v.Applied is taken just
	// before this call, so the stamp stands for it.
	attrs := []any{"event", event, "version", v.ID, "previous", prev,
		"source", v.Source, "by", e.By, "added", e.Added, "removed", e.Removed, "changed", e.Changed, "diff", summarize(diff)}
	if err != nil {
		attrs = append(attrs, "err", e.Error)
	}
	s.log.Log(context.Background(), level, "config audit", attrs...)
}

// actor is the subject of the admin API caller whose request ctx belongs
// to; empty outside an admin request.
func actor(ctx context.Context) string {
	if ex, ok := ctx.Value(exchangeKey{}).(*exchange); ok {
		return ex.principal.Subject
	}
	return ""
}
