package k8s

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/interceptors/identity"
)

// check returns every way an overlay falls short of what the processes
// need; ports are the contract's.
func check(r *rendered, ports map[string]int32) []string {
	bad := slices.Clone(r.namespaceErr)
	// The pods' own checks run even when the edge's config does not parse
	// (a missing Secret breaks both: say both).
	if cfg, cmName, err := r.edgeConfig(); err != nil {
		bad = append(bad, err.Error())
	} else {
		bad = append(bad, checkEdge(r, cfg, cmName, ports["edge"])...)
		for _, u := range cfg.Upstreams {
			bad = append(bad, checkService(r, cfg, u, ports[u.Name])...)
		}
		bad = append(bad, checkIdentity(r, cfg)...)
		bad = append(bad, checkScrape(r, cfg)...)
	}
	bad = append(bad, checkOrderFlags(r, ports)...)
	for _, name := range sorted(r.Deployments) {
		bad = append(bad, checkPod(r, name, r.Deployments[name])...)
	}
	bad = append(bad, checkPDBs(r)...)
	for name, h := range r.HPAs {
		if d, ok := r.Deployments[h.Spec.ScaleTargetRef.Name]; !ok || h.Spec.ScaleTargetRef.Kind != "Deployment" {
			bad = append(bad, fmt.Sprintf("HPA %s scales %s %q, not a Deployment here", name, h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name))
		} else if d.Spec.Replicas != nil {
			bad = append(bad, fmt.Sprintf("Deployment %s sets replicas while HPA %s scales it: every apply would reset the count", d.Name, name))
		} else if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || d.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().IsZero() {
			bad = append(bad, fmt.Sprintf("HPA %s: want minReplicas >= 1 and a CPU request to scale on", name))
		}
	}
	if _, ok := r.HPAs["edge"]; !ok {
		bad = append(bad, "no HPA for the edge")
	}
	return bad
}

// edgeConfig finds the edge Deployment's config ConfigMap and parses its
// file with config.Parse and gateway.CheckRoutes, exactly as the edge loads it.
func (r *rendered) edgeConfig() (config.Config, string, error) {
	d, ok := r.Deployments["edge"]
	if !ok {
		return config.Config{}, "", fmt.Errorf("no edge Deployment")
	}
	c := d.Spec.Template.Spec.Containers[0]
	file := flagValue(c.Args, "config")
	for _, m := range c.VolumeMounts {
		if m.MountPath != path.Dir(file) {
			continue
		}
		if m.SubPath != "" {
			return config.Config{}, "", fmt.Errorf("edge: config mounted with subPath: a ConfigMap update would never reach the pod")
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			cm, ok := r.ConfigMaps[v.ConfigMap.Name]
			if !ok {
				return config.Config{}, "", fmt.Errorf("edge: ConfigMap %q is not in the overlay", v.ConfigMap.Name)
			}
			restore := setSecretEnv(r, c)
			cfg, err := config.Parse([]byte(cm.Data[path.Base(file)]), gateway.CheckRoutes)
			restore()
			if err != nil {
				return config.Config{}, "", fmt.Errorf("ConfigMap %s: %v", cm.Name, err)
			}
			return cfg, cm.Name, nil
		}
	}
	return config.Config{}, "", fmt.Errorf("edge: --config %q is not in a mounted ConfigMap", file)
}

// longestCall is the longest a request may run at the edge: every
// upstream's timeout, every override and the cap on client deadlines.
func longestCall(cfg config.Config) time.Duration {
	longest := cfg.Routes.MaxTimeout
	for _, u := range cfg.Upstreams {
		longest = max(longest, u.Timeout)
	}
	for _, o := range cfg.Routes.Overrides {
		longest = max(longest, o.Timeout, o.MaxTimeout)
	}
	return longest
}

// checkEdge: the edge listens where its container port and Service say,
// probes /healthz/live and /healthz/ready, and its termination grace
// covers preStop + drain_delay + shutdown_grace, which covers the
// longest call.
func checkEdge(r *rendered, cfg config.Config, cmName string, port int32) []string {
	var bad []string
	d := r.Deployments["edge"]
	c := d.Spec.Template.Spec.Containers[0]
	if cfg.Listen != fmt.Sprintf(":%d", port) {
		bad = append(bad, fmt.Sprintf("ConfigMap %s: listen %q, want :%d on every interface", cmName, cfg.Listen, port))
	}
	if p := containerPort(c, "http"); p != port {
		bad = append(bad, fmt.Sprintf("edge: container port http = %d, want %d", p, port))
	}
	probes := map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe}
	want := map[string]string{"startup": "/healthz/live", "liveness": "/healthz/live", "readiness": "/healthz/ready"}
	for kind, p := range probes {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != want[kind] || resolvePort(c, p.HTTPGet.Port.String()) != port {
			bad = append(bad, fmt.Sprintf("edge: %s probe %s, want httpGet %s on port %d", kind, describe(p), want[kind], port))
		}
	}
	grace, preStop := termination(d)
	if need := preStop + cfg.DrainDelay + cfg.ShutdownGrace; grace <= need {
		bad = append(bad, fmt.Sprintf("edge: terminationGracePeriodSeconds %v, want more than preStop %v + drain_delay %v + shutdown_grace %v", grace, preStop, cfg.DrainDelay, cfg.ShutdownGrace))
	}
	if l := longestCall(cfg); cfg.ShutdownGrace < l {
		bad = append(bad, fmt.Sprintf("ConfigMap %s: shutdown_grace %v is shorter than the longest call %v: a shutdown would cut it", cmName, cfg.ShutdownGrace, l))
	}
	return append(bad, checkServicePorts(r, "edge", d, port, false)...)
}

// checkService: one upstream's Deployment serves grpc.health.v1 on its
// contract port, reached through a headless Service by the address the
// edge config names; its grace covers preStop and the longest call.
func checkService(r *rendered, cfg config.Config, u config.UpstreamConfig, port int32) []string {
	d, ok := r.Deployments[u.Name]
	if !ok {
		return []string{fmt.Sprintf("upstream %s: no Deployment", u.Name)}
	}
	var bad []string
	c := d.Spec.Template.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != u.Name || flagValue(c.Args, "listen") != fmt.Sprintf(":%d", port) {
		bad = append(bad, fmt.Sprintf("%s: args %v, want portico %s --listen :%d", u.Name, c.Args, u.Name, port))
	}
	if p := containerPort(c, "grpc"); p != port {
		bad = append(bad, fmt.Sprintf("%s: container port grpc = %d, want %d", u.Name, p, port))
	}
	for kind, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.GRPC == nil || p.GRPC.Port != port || p.GRPC.Service == nil || *p.GRPC.Service != u.HealthService {
			bad = append(bad, fmt.Sprintf("%s: %s probe %s, want grpc on %d for %q", u.Name, kind, describe(p), port, u.HealthService))
		}
	}
	if p := c.LivenessProbe; p == nil || (p.GRPC == nil && p.TCPSocket == nil) {
		bad = append(bad, fmt.Sprintf("%s: liveness probe %s, want grpc or tcpSocket", u.Name, describe(p)))
	}
	if want := fmt.Sprintf("dns:///%s.%s.svc.cluster.local:%d", u.Name, r.Namespace, port); !slices.Equal(u.Addresses, []string{want}) {
		bad = append(bad, fmt.Sprintf("edge config upstream %s: %v, want [%s]", u.Name, u.Addresses, want))
	}
	grace, preStop := termination(d)
	if need := preStop + longestCall(cfg); grace <= need {
		bad = append(bad, fmt.Sprintf("%s: terminationGracePeriodSeconds %v, want more than preStop %v + the longest call %v", u.Name, grace, preStop, longestCall(cfg)))
	}
	return append(bad, checkServicePorts(r, u.Name, d, port, true)...)
}

// checkOrderFlags: order reaches inventory and payment through their
// headless Services' DNS names in this namespace.
func checkOrderFlags(r *rendered, ports map[string]int32) []string {
	d, ok := r.Deployments["order"]
	if !ok {
		return nil // checkService reports it
	}
	var bad []string
	args := d.Spec.Template.Spec.Containers[0].Args
	for _, up := range []string{"inventory", "payment"} {
		want := fmt.Sprintf("dns:///%s.%s.svc.cluster.local:%d", up, r.Namespace, ports[up])
		if got := flagValue(args, up); got != want {
			bad = append(bad, fmt.Sprintf("order: --%s %q, want %q", up, got, want))
		}
	}
	return bad
}

// checkServicePorts: the Service named like the Deployment selects its
// pods and exposes the port (headless for the gRPC services, so clients
// see every pod).
func checkServicePorts(r *rendered, name string, d *appsv1.Deployment, port int32, headless bool) []string {
	s, ok := r.Services[name]
	if !ok {
		return []string{fmt.Sprintf("%s: no Service", name)}
	}
	var bad []string
	if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) || len(s.Spec.Selector) == 0 {
		bad = append(bad, fmt.Sprintf("Service %s: selector %v does not select the Deployment's pods", name, s.Spec.Selector))
	}
	if headless != (s.Spec.ClusterIP == corev1.ClusterIPNone) {
		bad = append(bad, fmt.Sprintf("Service %s: clusterIP %q, headless want %v", name, s.Spec.ClusterIP, headless))
	}
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != port || resolvePort(d.Spec.Template.Spec.Containers[0], s.Spec.Ports[0].TargetPort.String()) != port {
		bad = append(bad, fmt.Sprintf("Service %s: ports %v, want %d to the container's %d", name, s.Spec.Ports, port, port))
	}
	return bad
}

// checkIdentity: the edge signs callers' identities with a key ring from
// a Secret (identity.keys_env), and every service reads the same Secret
// key as $PORTICO_IDENTITY_KEYS, so it verifies them instead of trusting
// x-portico-* metadata (a service without keys only warns and trusts).
func checkIdentity(r *rendered, cfg config.Config) []string {
	if cfg.Identity.KeysEnv == "" {
		return []string{"edge config: identity.keys_env is empty: the edge would sign nothing and the services trust caller metadata as sent"}
	}
	var bad []string
	edge := secretEnv(r.Deployments["edge"], cfg.Identity.KeysEnv)
	if edge == nil {
		return []string{fmt.Sprintf("edge: env %s (identity.keys_env) is not read from a Secret", cfg.Identity.KeysEnv)}
	}
	for _, name := range []string{"inventory", "payment", "order"} {
		d, ok := r.Deployments[name]
		if !ok {
			continue // checkService reports it
		}
		ref := secretEnv(d, identity.EnvKeys)
		switch {
		case ref == nil:
			bad = append(bad, fmt.Sprintf("%s: no identity keys: env %s is not read from a Secret, so the service trusts caller metadata as sent", name, identity.EnvKeys))
		case ref.Name != edge.Name || ref.Key != edge.Key:
			bad = append(bad, fmt.Sprintf("%s: identity keys from Secret %q key %q, the edge signs with %q key %q", name, ref.Name, ref.Key, edge.Name, edge.Key))
		}
	}
	return bad
}

// secretEnv returns where d's first container reads env name from, nil
// when not from a Secret.
func secretEnv(d *appsv1.Deployment, name string) *corev1.SecretKeySelector {
	if d == nil {
		return nil
	}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return e.ValueFrom.SecretKeyRef
		}
	}
	return nil
}

// checkPod: non-root, no privilege escalation, read-only root, resource
// requests, and every referenced ConfigMap, Secret and claim present.
func checkPod(r *rendered, name string, d *appsv1.Deployment) []string {
	var bad []string
	ps := d.Spec.Template.Spec
	if sc := ps.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		bad = append(bad, fmt.Sprintf("%s: pod securityContext must set runAsNonRoot: true and a non-zero runAsUser", name))
	}
	for _, c := range ps.Containers {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			bad = append(bad, fmt.Sprintf("%s/%s: container securityContext must forbid privilege escalation and make the root read-only", name, c.Name))
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			bad = append(bad, fmt.Sprintf("%s/%s: want cpu and memory requests, got %v", name, c.Name, c.Resources.Requests))
		}
		for _, e := range c.Env {
			if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
				if s := r.Secrets[ref.SecretKeyRef.Name]; s == nil || s.Data[ref.SecretKeyRef.Key] == nil {
					bad = append(bad, fmt.Sprintf("%s/%s: env %s reads Secret %q key %q, not in the overlay", name, c.Name, e.Name, ref.SecretKeyRef.Name, ref.SecretKeyRef.Key))
				}
			}
		}
	}
	for _, v := range ps.Volumes {
		switch {
		case v.ConfigMap != nil && r.ConfigMaps[v.ConfigMap.Name] == nil,
			v.Secret != nil && r.Secrets[v.Secret.SecretName] == nil,
			v.PersistentVolumeClaim != nil && r.Claims[v.PersistentVolumeClaim.ClaimName] == nil:
			bad = append(bad, fmt.Sprintf("%s: volume %s refers to an object not in the overlay", name, v.Name))
		}
	}
	return bad
}

// checkPDBs: every Deployment has exactly one PodDisruptionBudget whose
// selector matches its pods, and every PDB selects some Deployment.
func checkPDBs(r *rendered) []string {
	var bad []string
	covered := map[string]int{}
	for _, pname := range sorted(r.PDBs) {
		sel, err := metaSelector(r.PDBs[pname])
		if err != nil {
			bad = append(bad, fmt.Sprintf("PDB %s: %v", pname, err))
			continue
		}
		n := 0
		for dname, d := range r.Deployments {
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				covered[dname]++
				n++
			}
		}
		if n == 0 {
			bad = append(bad, fmt.Sprintf("PDB %s: selector %v matches no Deployment's pods", pname, sel))
		}
	}
	for _, dname := range sorted(r.Deployments) {
		if covered[dname] != 1 {
			bad = append(bad, fmt.Sprintf("Deployment %s: %d PodDisruptionBudgets select its pods, want 1", dname, covered[dname]))
		}
	}
	return bad
}

// termination is a Deployment's termination grace and preStop sleep.
func termination(d *appsv1.Deployment) (grace, preStop time.Duration) {
	ps := d.Spec.Template.Spec
	if ps.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*ps.TerminationGracePeriodSeconds) * time.Second
	}
	if lc := ps.Containers[0].Lifecycle; lc != nil && lc.PreStop != nil && lc.PreStop.Sleep != nil {
		preStop = time.Duration(lc.PreStop.Sleep.Seconds) * time.Second
	}
	return grace, preStop
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// resolvePort turns a probe's or Service's port (a number or a name) into
// the container's port number.
func resolvePort(c corev1.Container, port string) int32 {
	if p := containerPort(c, port); p != 0 {
		return p
	}
	var n int32
	fmt.Sscan(port, &n)
	return n
}

func describe(p *corev1.Probe) string {
	if p == nil {
		return "none"
	}
	return strings.TrimPrefix(p.ProbeHandler.String(), "&ProbeHandler")
}

// flagValue returns the value after --name in args.
func flagValue(args []string, name string) string {
	if i := slices.Index(args, "--"+name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func sorted[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// metaSelector converts a PDB's label selector; none is an error.
func metaSelector(p *policyv1.PodDisruptionBudget) (labels.Selector, error) {
	if p.Spec.Selector == nil {
		return nil, errors.New("no selector")
	}
	return metav1.LabelSelectorAsSelector(p.Spec.Selector)
}

// setSecretEnv sets the container's Secret-backed environment variables
// from the overlay's Secrets, as the kubelet would, so the config's env:
// references resolve; it returns a function restoring the environment.
// A missing Secret key leaves the variable unset (checkPod reports it).
func setSecretEnv(r *rendered, c corev1.Container) func() {
	var undo []func()
	for _, e := range c.Env {
		ref := e.ValueFrom
		if ref == nil || ref.SecretKeyRef == nil || r.Secrets[ref.SecretKeyRef.Name] == nil {
			continue
		}
		v, ok := r.Secrets[ref.SecretKeyRef.Name].Data[ref.SecretKeyRef.Key]
		if !ok {
			continue
		}
		old, had := os.LookupEnv(e.Name)
		os.Setenv(e.Name, string(v))
		undo = append(undo, func() {
			if had {
				os.Setenv(e.Name, old)
			} else {
				os.Unsetenv(e.Name)
			}
		})
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}
