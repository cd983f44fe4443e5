package k8s

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var overlays = []string{"dev", "prod"}

func renderOverlay(t *testing.T, name string) *rendered {
	t.Helper()
	r, err := render(filepath.Join("overlays", name))
	if err != nil {
		t.Fatalf("render overlays/%s: %v", name, err)
	}
	return r
}

// TestOverlays renders each overlay with kustomize, decodes every object
// with the Kubernetes API types (unknown fields fail) and checks probes,
// ports, the drain arithmetic, security, requests, PDBs and the edge's
// config (see check).
func TestOverlays(t *testing.T) {
	ports := contractPorts(t)
	for _, name := range overlays {
		t.Run(name, func(t *testing.T) {
			r := renderOverlay(t, name)
			if len(r.Deployments) != 4 {
				t.Errorf("%d Deployments, want edge, inventory, payment and order", len(r.Deployments))
			}
			for _, p := range check(r, ports) {
				t.Error(p)
			}
		})
	}
}

// TestDevUsesSQLiteOnVolumes: dev's services keep SQLite on a
// PersistentVolumeClaim mounted where --db points.
func TestDevUsesSQLiteOnVolumes(t *testing.T) {
	r := renderOverlay(t, "dev")
	for _, name := range []string{"inventory", "payment", "order"} {
		d := r.Deployments[name]
		c := d.Spec.Template.Spec.Containers[0]
		db := flagValue(c.Args, "db")
		if !mountedClaim(d.Spec.Template.Spec, c, db) {
			t.Errorf("%s: --db %q is not on a PersistentVolumeClaim", name, db)
		}
	}
}

// TestProdReadsDatabaseFromSecret: prod's services take --db from a
// Secret through $(DATABASE_URL), never a literal URL; check reports a
// Secret without the key.
func TestProdReadsDatabaseFromSecret(t *testing.T) {
	r := renderOverlay(t, "prod")
	defer func() {
		for _, s := range r.Secrets {
			delete(s.Data, "database-url")
		}
		if got := strings.Join(check(r, contractPorts(t)), "\n"); !strings.Contains(got, `key "database-url"`) {
			t.Errorf("check without database-url = %q, want it reported", got)
		}
	}()
	for _, name := range []string{"inventory", "payment", "order"} {
		c := r.Deployments[name].Spec.Template.Spec.Containers[0]
		if db := flagValue(c.Args, "db"); db != "$(DATABASE_URL)" {
			t.Errorf("%s: --db %q, want $(DATABASE_URL)", name, db)
		}
		ok := false
		for _, e := range c.Env {
			ok = ok || e.Name == "DATABASE_URL" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
		}
		if !ok {
			t.Errorf("%s: DATABASE_URL does not come from a Secret", name)
		}
	}
}

func mountedClaim(ps corev1.PodSpec, c corev1.Container, file string) bool {
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(file, m.MountPath+"/") {
			continue
		}
		for _, v := range ps.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil {
				return true
			}
		}
	}
	return false
}

// TestCheckCatches breaks one thing at a time in the rendered dev overlay
// and expects check to say so: the checks can fail.
func TestCheckCatches(t *testing.T) {
	ports := contractPorts(t)
	i64 := func(v int64) *int64 { return &v }
	tests := []struct {
		name   string
		break_ func(r *rendered)
		want   string
	}{
		{"edge grace too short", func(r *rendered) { r.Deployments["edge"].Spec.Template.Spec.TerminationGracePeriodSeconds = i64(25) }, "edge: terminationGracePeriodSeconds"},
		{"service grace too short", func(r *rendered) { r.Deployments["payment"].Spec.Template.Spec.TerminationGracePeriodSeconds = i64(10) }, "payment: terminationGracePeriodSeconds"},
		{"readiness on live", func(r *rendered) {
			r.Deployments["edge"].Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Path = "/healthz/live"
		}, "edge: readiness probe"},
		{"no startup probe", func(r *rendered) { r.Deployments["edge"].Spec.Template.Spec.Containers[0].StartupProbe = nil }, "edge: startup probe"},
		{"grpc probe wrong port", func(r *rendered) {
			r.Deployments["inventory"].Spec.Template.Spec.Containers[0].ReadinessProbe.GRPC.Port = 43102
		}, "inventory: readiness probe"},
		{"grpc probe wrong service", func(r *rendered) {
			s := "portico.order.v1.OrderService"
			r.Deployments["inventory"].Spec.Template.Spec.Containers[0].StartupProbe.GRPC.Service = &s
		}, "inventory: startup probe"},
		{"wrong container port", func(r *rendered) {
			r.Deployments["order"].Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 8080
		}, "order: container port"},
		{"service not headless", func(r *rendered) { r.Services["payment"].Spec.ClusterIP = "" }, "Service payment: clusterIP"},
		{"service wrong target", func(r *rendered) { r.Services["edge"].Spec.Ports[0].TargetPort = intstr.FromInt32(8080) }, "Service edge: ports"},
		{"root pod", func(r *rendered) { r.Deployments["order"].Spec.Template.Spec.SecurityContext.RunAsUser = i64(0) }, "order: pod securityContext"},
		{"no requests", func(r *rendered) { r.Deployments["edge"].Spec.Template.Spec.Containers[0].Resources.Requests = nil }, "edge/edge: want cpu and memory requests"},
		{"pdb selects nothing", func(r *rendered) {
			r.PDBs["payment"].Spec.Selector.MatchLabels["app.kubernetes.io/component"] = "paymnet"
		}, "PDB payment"},
		{"order upstream other namespace", func(r *rendered) {
			a := r.Deployments["order"].Spec.Template.Spec.Containers[0].Args
			for i := range a {
				a[i] = strings.Replace(a[i], ".portico-dev.", ".portico.", 1)
			}
		}, "order: --inventory"},
		{"invalid edge config", func(r *rendered) {
			for _, cm := range r.ConfigMaps {
				cm.Data["gateway.yaml"] += "\nshutdown_grace: -1s\n"
			}
		}, "shutdown_grace"},
		{"shutdown shorter than a route", func(r *rendered) {
			for _, cm := range r.ConfigMaps {
				cm.Data["gateway.yaml"] = strings.Replace(cm.Data["gateway.yaml"], "max_timeout: 10s", "max_timeout: 20s", 1)
			}
		}, "shorter than the longest call"},
		{"config by subPath", func(r *rendered) {
			r.Deployments["edge"].Spec.Template.Spec.Containers[0].VolumeMounts[0].SubPath = "gateway.yaml"
		}, "subPath"},
		{"no HPA", func(r *rendered) { delete(r.HPAs, "edge") }, "no HPA for the edge"},
		{"missing secret", func(r *rendered) { clear(r.Secrets) }, "not in the overlay"},
		{"api key secret missing", func(r *rendered) {
			for _, s := range r.Secrets {
				delete(s.Data, "api-key-ops")
			}
		}, "PORTICO_API_KEY_OPS"},
		{"service without identity keys", func(r *rendered) {
			r.Deployments["payment"].Spec.Template.Spec.Containers[0].Env = nil
		}, "payment: no identity keys"},
		{"service with another key", func(r *rendered) {
			r.Deployments["order"].Spec.Template.Spec.Containers[0].Env[0].ValueFrom.SecretKeyRef.Key = "api-key-ops"
		}, `order: identity keys from Secret`},
		{"edge signs nothing", func(r *rendered) {
			for _, cm := range r.ConfigMaps {
				cm.Data["gateway.yaml"] = strings.Replace(cm.Data["gateway.yaml"], "keys_env: PORTICO_IDENTITY_KEYS", "keys_env: \"\"", 1)
			}
		}, "identity.keys_env is empty"},
		{"no metrics port", func(r *rendered) {
			r.Deployments["payment"].Spec.Template.Spec.Containers[0].Ports = r.Deployments["payment"].Spec.Template.Spec.Containers[0].Ports[:1]
		}, "payment: no container port named metrics"},
		{"service without --admin-listen", func(r *rendered) {
			c := &r.Deployments["inventory"].Spec.Template.Spec.Containers[0]
			c.Args = slices.DeleteFunc(slices.Clone(c.Args), func(a string) bool { return a == "--admin-listen" || a == ":43105" })
		}, "inventory: --admin-listen"},
		{"edge without admin_listen", func(r *rendered) {
			for _, cm := range r.ConfigMaps {
				cm.Data["gateway.yaml"] = strings.Replace(cm.Data["gateway.yaml"], `admin_listen: ":43104"`, "", 1)
			}
		}, "edge: edge config admin_listen"},
		{"admin on loopback", func(r *rendered) {
			for _, cm := range r.ConfigMaps {
				cm.Data["gateway.yaml"] = strings.Replace(cm.Data["gateway.yaml"], `admin_listen: ":43104"`, `admin_listen: "127.0.0.1:43104"`, 1)
			}
		}, "edge: edge config admin_listen"},
		{"no scrape annotation", func(r *rendered) { delete(r.Deployments["order"].Spec.Template.Annotations, "prometheus.io/port") }, "order: pod annotations"},
		{"replicas beside the HPA", func(r *rendered) { r.Deployments["edge"].Spec.Replicas = new(int32(3)) }, "sets replicas while HPA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := renderOverlay(t, "dev")
			if bad := check(r, ports); len(bad) > 0 {
				t.Fatalf("dev fails before the break: %v", bad)
			}
			tt.break_(r)
			got := strings.Join(check(r, ports), "\n")
			if !strings.Contains(got, tt.want) {
				t.Errorf("check after %s = %q, want a problem mentioning %q", tt.name, got, tt.want)
			}
		})
	}
}

// TestProdPodMonitor: prod ships a PodMonitor that scrapes every pod's
// metrics port as job portico-<component>; check reports one that
// selects no pods, scrapes another port or keeps the Operator's job.
func TestProdPodMonitor(t *testing.T) {
	ports := contractPorts(t)
	if len(renderOverlay(t, "prod").PodMonitors) == 0 {
		t.Fatal("prod renders no PodMonitor: nothing would scrape the pods under the Prometheus Operator")
	}
	tests := []struct {
		name   string
		break_ func(pm *monitoringv1.PodMonitor)
		want   string
	}{
		{"selects nothing", func(pm *monitoringv1.PodMonitor) {
			pm.Spec.Selector.MatchLabels = map[string]string{"app.kubernetes.io/name": "porticoo"}
		}, "does not select edge's pods"},
		{"api port", func(pm *monitoringv1.PodMonitor) { pm.Spec.PodMetricsEndpoints[0].Port = new("http") }, "want port metrics"},
		{"operator's job", func(pm *monitoringv1.PodMonitor) { pm.Spec.PodMetricsEndpoints[0].RelabelConfigs = nil }, `get job ""`},
		{"a job the rules do not name", func(pm *monitoringv1.PodMonitor) {
			pm.Spec.PodMetricsEndpoints[0].RelabelConfigs[0].Replacement = new("svc-$1")
		}, `job "svc-edge" is not a job`},
		{"every namespace", func(pm *monitoringv1.PodMonitor) { pm.Spec.NamespaceSelector.Any = true }, "namespaceSelector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := renderOverlay(t, "prod")
			for _, pm := range r.PodMonitors {
				tt.break_(pm)
			}
			got := strings.Join(check(r, ports), "\n")
			if !strings.Contains(got, tt.want) {
				t.Errorf("check after %s = %q, want a problem mentioning %q", tt.name, got, tt.want)
			}
		})
	}
}

// TestStrictDecoding: a misspelt field or an unknown kind fails the
// render instead of being dropped.
func TestStrictDecoding(t *testing.T) {
	tests := []struct{ name, apiVersion, kind, json string }{
		{"misspelt field", "apps/v1", "Deployment", `{"spec":{"replica":2}}`},
		{"misspelt probe", "apps/v1", "Deployment", `{"spec":{"template":{"spec":{"containers":[{"name":"edge","readinesProbe":{}}]}}}}`},
		{"unknown kind", "v1", "Pod", `{}`},
		{"old api version", "policy/v1beta1", "PodDisruptionBudget", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := render(filepath.Join("overlays", "dev"))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.add(tt.apiVersion, tt.kind, "x", []byte(tt.json)); err == nil {
				t.Errorf("add(%s %s %s) = nil, want an error", tt.apiVersion, tt.kind, tt.json)
			}
		})
	}
}
