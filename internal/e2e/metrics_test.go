package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/internal/testproc"
)

// labelSets are the label names every Portico series may carry, by metric
// family (go_*, process_* and the gRPC families come from libraries and
// are checked by prefix below). A new family must be listed here, with
// labels whose values are bounded: never an order id, a user id or a raw
// path.
var labelSets = map[string][]string{
	"portico_gateway_requests_total":                        {"code", "method", "problem", "route", "upstream"},
	"portico_gateway_request_duration_seconds":              {"code", "method", "route", "upstream"},
	"portico_gateway_requests_in_flight":                    {"route"},
	"portico_gateway_upstream_errors_total":                 {"grpc_code", "upstream"},
	"portico_gateway_config_reloads_total":                  {"result"},
	"portico_gateway_config_info":                           {"version"},
	"portico_gateway_config_last_applied_timestamp_seconds": {},
	"portico_gateway_shed_total":                            {"scope"},
	"portico_gateway_connections_open":                      {},
	"portico_gateway_connections_max":                       {},
	"portico_gateway_connections_idle_closed_total":         {},
	"portico_gateway_accept_paused_total":                   {},
	"portico_gateway_accept_paused":                         {},
	"portico_gateway_ratelimit_redis_degraded":              {},
	"portico_gateway_rate_limited_total":                    {"layer"},
	"portico_gateway_auth_failures_total":                   {"reason"},
	"portico_gateway_in_flight_refused_total":               {"cap"},
	"portico_gateway_stale_answers_total":                   {"reason", "route"},
	"portico_gateway_stale_bytes":                           {"kind"},
	"portico_gateway_stale_copies":                          {},
	"portico_gateway_stale_evictions_total":                 {},
	"portico_upstream_retries_total":                        {"upstream"},
	"portico_upstream_retry_budget_exhausted_total":         {"upstream"},
	"portico_upstream_breaker_state":                        {"breaker", "state"},
	"portico_upstream_breaker_transitions_total":            {"breaker", "from", "to"},
	"portico_upstream_bulkhead_rejections_total":            {"upstream"},
	"portico_upstream_in_flight":                            {"upstream"},
	"portico_upstream_ejections_total":                      {"upstream"},
	"portico_upstream_ejected":                              {"upstream"},
	"portico_order_reconcile_rounds_total":                  {"result"},
	"portico_order_reconcile_settled_total":                 {},
	"portico_order_reconcile_pending":                       {},
	"portico_order_reconcile_oldest_pending_seconds":        {},
	"portico_order_reconcile_backing_off":                   {},
	"portico_order_reconcile_accepted":                      {},
	"grpc_server_started_total":                             {"grpc_method", "grpc_service", "grpc_type"},
	"grpc_server_handled_total":                             {"grpc_code", "grpc_method", "grpc_service", "grpc_type"},
	"grpc_server_msg_received_total":                        {"grpc_method", "grpc_service", "grpc_type"},
	"grpc_server_msg_sent_total":                            {"grpc_method", "grpc_service", "grpc_type"},
	"grpc_server_handling_seconds":                          {"grpc_method", "grpc_service", "grpc_type"},
	"grpc_client_started_total":                             {"grpc_method", "grpc_service", "grpc_type"},
	"grpc_client_handled_total":                             {"grpc_code", "grpc_method", "grpc_service", "grpc_type"},
	"grpc_client_msg_received_total":                        {"grpc_method", "grpc_service", "grpc_type"},
	"grpc_client_msg_sent_total":                            {"grpc_method", "grpc_service", "grpc_type"},
	"grpc_client_handling_seconds":                          {"grpc_method", "grpc_service", "grpc_type"},
}

// histogramSuffix label: le on buckets.
func labelNames(m *model.Sample) []string {
	var out []string
	for k := range m.Metric {
		if k != model.MetricNameLabel && k != "le" {
			out = append(out, string(k))
		}
	}
	slices.Sort(out)
	return out
}

// seriesKey spells a sample's series as the exposition format does:
// name{k="v",...}, labels in name order.
func seriesKey(s *model.Sample) string {
	var parts []string
	for _, k := range labelNames(s) {
		parts = append(parts, k+"="+strconv.Quote(string(s.Metric[model.LabelName(k)])))
	}
	return string(s.Metric[model.MetricNameLabel]) + "{" + strings.Join(parts, ",") + "}"
}

// family strips a histogram's _bucket, _sum and _count suffix.
func family(name string) string {
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if f, ok := strings.CutSuffix(name, suf); ok {
			if _, known := labelSets[f]; known {
				return f
			}
		}
	}
	return name
}

// scrape fetches a /metrics body and decodes it.
func scrape(t *testing.T, url, token string) ([]byte, model.Vector) {
	t.Helper()
	r := call(t, "GET", url, token, "")
	if r.status != 200 {
		t.Fatalf("GET %s = %d", url, r.status)
	}
	dec := expfmt.SampleDecoder{Dec: expfmt.NewDecoder(bytes.NewReader(r.body), expfmt.NewFormat(expfmt.TypeTextPlain)),
		Opts: &expfmt.DecodeOptions{Timestamp: model.Now()}}
	var all model.Vector
	for {
		var v model.Vector
		if err := dec.Decode(&v); err != nil {
			break
		}
		all = append(all, v...)
	}
	return r.body, all
}

// TestMetricsEveryProcess scrapes the edge (admin token) and the three
// services' admin addresses under `portico dev`, before any API request:
// every Portico and gRPC series has exactly its listed label names, the
// runtime, process and build-info collectors are there, the resilience
// and gRPC series already exist at zero, and promtool check metrics
// accepts each output (when promtool is installed).
func TestMetricsEveryProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	base := testproc.FreePortRange(t, 10)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", testproc.TempDir(t))
	edgeURL := "http://" + testproc.Addr(base)
	testproc.WaitHTTP(t, dev, edgeURL+"/health")
	testproc.WaitDevReady(t, dev)
	if r := call(t, "GET", edgeURL+"/metrics", "", ""); r.status != 401 {
		t.Errorf("GET /metrics without a token = %d, want 401", r.status)
	}
	if r := call(t, "GET", edgeURL+"/metrics", "demo-read-token", ""); r.status != 403 {
		t.Errorf("GET /metrics as a reader = %d, want 403", r.status)
	}
	processes := []struct {
		name, url, token string
		zero             []string // series that must exist at 0 before any request
	}{
		{"gateway", edgeURL + "/metrics", "demo-admin-token", []string{
			`portico_upstream_retries_total{upstream="inventory"}`,
			`portico_upstream_breaker_transitions_total{breaker="order",from="closed",to="open"}`,
			`portico_gateway_requests_total{code="503",method="POST",problem="CIRCUIT_OPEN",route="/api/orders",upstream="order"}`,
			`portico_gateway_requests_total{code="200",method="GET",problem="",route="/api/inventory/{sku}",upstream="inventory"}`,
			`portico_gateway_ratelimit_redis_degraded{}`,
			`portico_gateway_rate_limited_total{layer="caller"}`,
			`portico_gateway_auth_failures_total{reason="CREDENTIALS_EXPIRED"}`, // the 401 and 403 above count UNAUTHENTICATED and FORBIDDEN
			`grpc_client_handled_total{grpc_code="Unavailable",grpc_method="CreateOrder",grpc_service="portico.order.v1.OrderService",grpc_type="unary"}`,
			`grpc_client_started_total{grpc_method="GetItem",grpc_service="portico.inventory.v1.InventoryService",grpc_type="unary"}`,
			`grpc_client_handling_seconds_count{grpc_method="CreatePayment",grpc_service="portico.payment.v1.PaymentService",grpc_type="unary"}`,
		}},
		{"inventory", "http://" + testproc.Addr(base+5) + "/metrics", "", []string{
			`grpc_server_handled_total{grpc_code="Unavailable",grpc_method="ReserveStock",grpc_service="portico.inventory.v1.InventoryService",grpc_type="unary"}`,
		}},
		{"payment", "http://" + testproc.Addr(base+6) + "/metrics", "", []string{
			`grpc_server_started_total{grpc_method="CreatePayment",grpc_service="portico.payment.v1.PaymentService",grpc_type="unary"}`,
		}},
		{"order", "http://" + testproc.Addr(base+7) + "/metrics", "", []string{
			`portico_upstream_retries_total{upstream="payment"}`,
			`portico_upstream_breaker_state{breaker="inventory",state="open"}`,
			`portico_order_reconcile_rounds_total{result="error"}`,
			`grpc_client_handled_total{grpc_code="OK",grpc_method="ReserveStock",grpc_service="portico.inventory.v1.InventoryService",grpc_type="unary"}`,
			`grpc_client_msg_received_total{grpc_method="RefundPayment",grpc_service="portico.payment.v1.PaymentService",grpc_type="unary"}`,
		}},
	}
	exported := map[string]bool{}
	for _, p := range processes {
		t.Run(p.name, func(t *testing.T) {
			if p.token == "" { // a service's admin address answers its probes too
				for _, probe := range []string{"/healthz/live", "/healthz/ready"} {
					u := strings.TrimSuffix(p.url, "/metrics") + probe
					if r := call(t, "GET", u, "", ""); r.status != 200 || !strings.Contains(string(r.body), `"UP"`) {
						t.Errorf("GET %s = %d %s, want 200 UP", u, r.status, r.body)
					}
				}
			}
			body, samples := scrape(t, p.url, p.token)
			seen := map[string]float64{}
			families := map[string]bool{}
			for _, s := range samples {
				name := string(s.Metric[model.MetricNameLabel])
				families[name] = true
				seen[seriesKey(s)] = float64(s.Value)
				f := family(name)
				want, ok := labelSets[f]
				if !ok {
					if strings.HasPrefix(name, "portico_") || strings.HasPrefix(name, "grpc_") {
						t.Errorf("%s: family %s is not in labelSets", p.name, f)
					}
					continue
				}
				if got := labelNames(s); !slices.Equal(got, want) {
					t.Errorf("%s: %s has labels %v, want %v", p.name, s.Metric, got, want)
				}
			}
			for _, f := range []string{"go_goroutines", "process_cpu_seconds_total", "go_build_info"} {
				if !families[f] {
					t.Errorf("%s: no %s", p.name, f)
				}
			}
			for _, z := range p.zero {
				if v, ok := seen[z]; !ok || v != 0 {
					t.Errorf("%s: %s = %v (present %v), want 0 before any request", p.name, z, v, ok)
				}
			}
			promtool(t, body, "check", "metrics")
		})
	}
	// Make one call too (a series created by the provider replaces its
	// zero), then collect every family for the deploy files' queries.
	if r := call(t, "POST", edgeURL+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: metrics-1"); r.status != 201 {
		t.Fatalf("POST /api/orders = %d %s", r.status, r.body)
	}
	for _, p := range processes {
		_, samples := scrape(t, p.url, p.token)
		for _, s := range samples {
			exported[string(s.Metric[model.MetricNameLabel])] = true
		}
	}
	t.Run("deploy queries name exported metrics", func(t *testing.T) { checkDeployQueries(t, exported) })
}

// metricName finds the metric names in a PromQL expression: Portico's,
// gRPC's and the runtime's, the only ones the deploy files read.
var metricName = regexp.MustCompile(`\b(?:portico|grpc|go|process)_[a-z0-9_]+`)

// scrapeUp matches Prometheus's own up series, which the target rules
// read and no process exports.
var scrapeUp = regexp.MustCompile(`\bup\{`)

// labelsOut matches what holds label names, not metrics: by (...),
// without (...) and {matchers}.
var labelsOut = regexp.MustCompile(`\b(?:by|without)\s*\([^)]*\)|\{[^}]*\}`)

// checkDeployQueries: every alert rule's and every dashboard panel's
// query names only metrics some process exported (histogram suffixes
// allowed), and promtool check rules accepts the rules.
func checkDeployQueries(t *testing.T, exported map[string]bool) {
	root := filepath.Join("..", "..", "deploy")
	var exprs []string
	rulesFile := filepath.Join(root, "prometheus", "alerts.yaml")
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	b, err = os.ReadFile(filepath.Join(root, "grafana", "portico.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}
	if len(exprs) < 10 {
		t.Fatalf("only %d queries found in deploy/", len(exprs))
	}
	for _, e := range exprs {
		names := metricName.FindAllString(labelsOut.ReplaceAllString(e, ""), -1)
		if len(names) == 0 && !scrapeUp.MatchString(e) {
			t.Errorf("query %q names no metric", e)
		}
		for _, n := range names {
			f := n
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(n, suf); ok && exported[base] {
					f = base
				}
			}
			if !exported[f] {
				t.Errorf("query %q reads %s, which no process exports", e, n)
			}
		}
	}
	promtoolFile(t, "check", "rules", rulesFile)
}

// promtool runs promtool with args and body on stdin, or logs that it
// is skipped when promtool is not installed (Debian: apt-get install
// prometheus).
func promtool(t *testing.T, body []byte, args ...string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Logf("promtool not installed (apt-get install prometheus): skipping promtool %s", strings.Join(args, " "))
		return
	}
	cmd := exec.Command(path, args...)
	if body != nil {
		cmd.Stdin = bytes.NewReader(body)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func promtoolFile(t *testing.T, args ...string) { t.Helper(); promtool(t, nil, args...) }
