package k8s

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/portico-gateway/portico/gateway/config"
)

// rendered is one overlay's objects, decoded into the Kubernetes types.
type rendered struct {
	Namespace    string
	Deployments  map[string]*appsv1.Deployment
	Services     map[string]*corev1.Service
	PDBs         map[string]*policyv1.PodDisruptionBudget
	HPAs         map[string]*autoscalingv2.HorizontalPodAutoscaler
	ConfigMaps   map[string]*corev1.ConfigMap
	Secrets      map[string]*corev1.Secret
	Claims       map[string]*corev1.PersistentVolumeClaim
	PodMonitors  map[string]*monitoringv1.PodMonitor
	namespaceErr []string
}

// render runs kustomize on dir, as `kubectl kustomize dir` would, and
// decodes every object strictly: an unknown field, or a kind the checks
// do not know, fails.
func render(dir string) (*rendered, error) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	r := &rendered{
		Deployments: map[string]*appsv1.Deployment{}, Services: map[string]*corev1.Service{},
		PDBs: map[string]*policyv1.PodDisruptionBudget{}, HPAs: map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{},
		Claims: map[string]*corev1.PersistentVolumeClaim{}, PodMonitors: map[string]*monitoringv1.PodMonitor{},
	}
	for _, res := range m.Resources() {
		data, err := res.MarshalJSON()
		if err != nil {
			return nil, err
		}
		if err := r.add(res.GetApiVersion(), res.GetKind(), res.GetName(), data); err != nil {
			return nil, err
		}
		ns := res.GetNamespace()
		if r.Namespace == "" {
			r.Namespace = ns
		} else if ns != r.Namespace {
			r.namespaceErr = append(r.namespaceErr, fmt.Sprintf("%s/%s in namespace %q, the rest in %q", res.GetKind(), res.GetName(), ns, r.Namespace))
		}
	}
	return r, nil
}

// add decodes one object into the map for its kind.
func (r *rendered) add(apiVersion, kind, name string, data []byte) error {
	var dst any
	switch apiVersion + " " + kind {
	case "apps/v1 Deployment":
		dst = put(r.Deployments, name)
	case "v1 Service":
		dst = put(r.Services, name)
	case "policy/v1 PodDisruptionBudget":
		dst = put(r.PDBs, name)
	case "autoscaling/v2 HorizontalPodAutoscaler":
		dst = put(r.HPAs, name)
	case "v1 ConfigMap":
		dst = put(r.ConfigMaps, name)
	case "v1 Secret":
		dst = put(r.Secrets, name)
	case "v1 PersistentVolumeClaim":
		dst = put(r.Claims, name)
	case "monitoring.coreos.com/v1 PodMonitor":
		dst = put(r.PodMonitors, name)
	default:
		return fmt.Errorf("%s %s %s: a kind the checks do not know", apiVersion, kind, name)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(dst); err != nil {
		return fmt.Errorf("%s %s: %w", kind, name, err)
	}
	return nil
}

// put stores a new *T under name and returns it.
func put[T any](m map[string]*T, name string) *T {
	v := new(T)
	m[name] = v
	return v
}

// contractPorts is each process's port, read from the gateway's constants
// (DefaultListen for the edge; the dev profile puts inventory, payment and
// order on the next three ports), never copied.
func contractPorts(t *testing.T) map[string]int32 {
	t.Helper()
	edge := portOf(t, config.DefaultListen)
	out := map[string]int32{"edge": int32(edge)}
	for _, u := range config.Dev(edge).Upstreams {
		out[u.Name] = int32(portOf(t, u.Addresses[0]))
	}
	return out
}

func portOf(t *testing.T, hostport string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatalf("SplitHostPort(%q): %v", hostport, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("port of %q: %v", hostport, err)
	}
	return n
}
