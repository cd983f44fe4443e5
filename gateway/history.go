package gateway

import (
	"fmt"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portico-gateway/portico/gateway/config"
)

// DefaultKeepVersions is how many applied configs the edge keeps for
// rollback, the live one included, when ops.keep_versions is zero.
const DefaultKeepVersions = 10

// keepAudit bounds the audit records kept in memory (the log has them
// all).
const keepAudit = 100

// history keeps the last applied configs and audit records. Safe for
// concurrent use.
type history struct {
	mu      sync.Mutex
	keep    int
	applied []kept // oldest first; the last is live
	audits  []AuditEntry
}

type kept struct {
	v   Version
	cfg config.Config
}

func newHistory() *history { return &history{keep: DefaultKeepVersions} }

// add records v as the live version; an older entry with the same ID
// gives way, and the oldest beyond keep are dropped.
func (h *history) add(v Version, cfg config.Config) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cfg.Ops.KeepVersions > 0 {
		h.keep = cfg.Ops.KeepVersions
	}
	h.applied = slices.DeleteFunc(h.applied, func(k kept) bool { return k.v.ID == v.ID })
	h.applied = append(h.applied, kept{v, cfg})
	if n := len(h.applied) - h.keep; n > 0 {
		h.applied = slices.Delete(h.applied, 0, n)
	}
}

// find returns the config of version id; for id "" the newest one that is
// not live.
func (h *history) find(id, live string) (config.Config, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.applied) - 1; i >= 0; i-- {
		k := h.applied[i]
		if id == k.v.ID || id == "" && k.v.ID != live {
			return k.cfg, true
		}
	}
	return config.Config{}, false
}

func (h *history) versions() []Version {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Version, len(h.applied))
	for i, k := range h.applied {
		out[len(out)-1-i] = k.v
	}
	return out
}

func (h *history) addAudit(e AuditEntry) {
	e.Diff = boundDiff(e.Diff)
	if len(e.Error) > maxAuditText {
		e.Error = e.Error[:maxAuditText] + "..."
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.audits = append(h.audits, e)
	if n := len(h.audits) - keepAudit; n > 0 {
		h.audits = slices.Delete(h.audits, 0, n)
	}
}

// Bounds of one kept audit record, so the audit log's memory and the
// admin API's answer stay bounded however large a change is (the reload's
// own answer and the change's validation carry it whole).
const (
	maxAuditDiff = 100  // diff lines, then "... and N more"
	maxAuditText = 1024 // bytes of a diff line or the error, then "..."
)

// boundDiff returns diff cut to maxAuditDiff lines of at most
// maxAuditText bytes each.
func boundDiff(diff []string) []string {
	n := min(len(diff), maxAuditDiff)
	out := make([]string, 0, n+1)
	for _, d := range diff[:n] {
		if len(d) > maxAuditText {
			d = d[:maxAuditText] + "..."
		}
		out = append(out, d)
	}
	if len(diff) > n {
		out = append(out, fmt.Sprintf("... and %d more", len(diff)-n))
	}
	return out
}

func (h *history) auditLog() []AuditEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]AuditEntry{}, h.audits...) // [] before the first change, never null
	slices.Reverse(out)
	return out
}

// reloadMetrics count config changes.
type reloadMetrics struct {
	reloads *prometheus.CounterVec
	last    prometheus.Gauge
	info    *prometheus.GaugeVec
}

func newReloadMetrics(reg prometheus.Registerer) (*reloadMetrics, error) {
	m := &reloadMetrics{
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portico_gateway_config_reloads_total",
			Help: "Config reloads by result: applied, rejected (invalid, or a new address that cannot be bound; the running config stays) or unchanged.",
		}, []string{"result"}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "portico_gateway_config_last_applied_timestamp_seconds",
			Help: "When the live config was applied (Unix time).",
		}),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "portico_gateway_config_info",
			Help: "1 for the live config's version (content hash).",
		}, []string{"version"}),
	}
	for _, r := range []string{"applied", "rejected", "unchanged"} {
		m.reloads.WithLabelValues(r) // zero-initialised, so rate() and alerts see them
	}
	for _, c := range []prometheus.Collector{m.reloads, m.last, m.info} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *reloadMetrics) result(r string) { m.reloads.WithLabelValues(r).Inc() }

func (m *reloadMetrics) applied(v Version) {
	m.result("applied")
	m.last.Set(float64(v.Applied.UnixNano()) / 1e9)
	m.info.Reset()
	m.info.WithLabelValues(v.ID).Set(1)
}
