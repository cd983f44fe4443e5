package k8s

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/portico-gateway/portico/gateway/config"
)

// componentLabel names a pod's process; the scrape's job is
// "portico-" + its value.
const componentLabel = "app.kubernetes.io/component"

// alertRules is the rules file whose target alerts name the scrape jobs.
var alertRules = filepath.Join("..", "prometheus", "alerts.yaml")

// checkScrape: every container declares a port named metrics on which its
// process serves /metrics without a token (the edge's admin_listen, a
// service's --admin-listen, on every interface), the pod's prometheus.io
// annotations name that port, and every PodMonitor scrapes the metrics
// port of every Deployment's pods as job portico-<component>, the jobs
// the alert rules expect.
func checkScrape(r *rendered, cfg config.Config) []string {
	var bad []string
	for _, name := range sorted(r.Deployments) {
		d := r.Deployments[name]
		c := d.Spec.Template.Spec.Containers[0]
		port := containerPort(c, "metrics")
		if port == 0 {
			bad = append(bad, fmt.Sprintf("%s: no container port named metrics", name))
			continue
		}
		listen := flagValue(c.Args, "admin-listen")
		what := "--admin-listen"
		if name == "edge" {
			listen, what = cfg.AdminListen, "edge config admin_listen"
		}
		if host, p, err := net.SplitHostPort(listen); err != nil || host != "" || p != strconv.Itoa(int(port)) {
			bad = append(bad, fmt.Sprintf("%s: %s %q, want :%d (the metrics port, every interface)", name, what, listen, port))
		}
		ann := d.Spec.Template.Annotations
		if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != strconv.Itoa(int(port)) || ann["prometheus.io/path"] != "/metrics" {
			bad = append(bad, fmt.Sprintf("%s: pod annotations %v, want prometheus.io/scrape true, port %d, path /metrics", name, ann, port))
		}
	}
	rules, err := os.ReadFile(alertRules)
	if err != nil {
		return append(bad, err.Error())
	}
	for _, name := range sorted(r.PodMonitors) {
		bad = append(bad, checkPodMonitor(r, name, r.PodMonitors[name], string(rules))...)
	}
	return bad
}

// checkPodMonitor: pm selects every Deployment's pods in its namespace
// and scrapes their metrics port at /metrics, relabelling job to
// portico-<component>, a job the alert rules name.
func checkPodMonitor(r *rendered, name string, pm *monitoringv1.PodMonitor, rules string) []string {
	var bad []string
	sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
	if err != nil {
		return []string{fmt.Sprintf("PodMonitor %s: selector: %v", name, err)}
	}
	if ns := pm.Spec.NamespaceSelector; ns.Any || len(ns.MatchNames) > 0 && !slices.Contains(ns.MatchNames, r.Namespace) {
		bad = append(bad, fmt.Sprintf("PodMonitor %s: namespaceSelector %+v, want its own namespace", name, ns))
	}
	for _, dn := range sorted(r.Deployments) {
		if !sel.Matches(labels.Set(r.Deployments[dn].Spec.Template.Labels)) {
			bad = append(bad, fmt.Sprintf("PodMonitor %s: selector %s does not select %s's pods", name, sel, dn))
		}
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 {
		return append(bad, fmt.Sprintf("PodMonitor %s: %d endpoints, want one: the metrics port", name, len(pm.Spec.PodMetricsEndpoints)))
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Port == nil || *ep.Port != "metrics" || ep.Path != "/metrics" {
		bad = append(bad, fmt.Sprintf("PodMonitor %s: endpoint port %v path %q, want port metrics, path /metrics", name, ep.Port, ep.Path))
	}
	for _, dn := range sorted(r.Deployments) {
		component := r.Deployments[dn].Spec.Template.Labels[componentLabel]
		job := jobOf(ep.RelabelConfigs, component)
		if job != "portico-"+component {
			bad = append(bad, fmt.Sprintf("PodMonitor %s: %s's pods get job %q, want portico-%s", name, dn, job, component))
		}
		if !strings.Contains(rules, `job="`+job+`"`) {
			bad = append(bad, fmt.Sprintf("PodMonitor %s: job %q is not a job %s's rules name", name, job, alertRules))
		}
	}
	return bad
}

// jobOf applies the relabelings that write job to a pod whose component
// label is component, the way Prometheus does for the default action
// (replace, regex (.*)), and returns the job; "" when none writes it.
func jobOf(rcs []monitoringv1.RelabelConfig, component string) string {
	job := ""
	for _, rc := range rcs {
		if rc.TargetLabel != "job" || rc.Action != "" && rc.Action != "replace" || rc.Regex != "" && rc.Regex != "(.*)" {
			continue
		}
		if len(rc.SourceLabels) != 1 || rc.SourceLabels[0] != "__meta_kubernetes_pod_label_app_kubernetes_io_component" {
			continue
		}
		repl := "$1"
		if rc.Replacement != nil {
			repl = *rc.Replacement
		}
		job = strings.ReplaceAll(repl, "$1", component)
	}
	return job
}
