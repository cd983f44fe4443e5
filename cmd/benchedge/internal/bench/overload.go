package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway/config"
)

// overloadFlags are `benchedge overload`'s settings.
type overloadFlags struct {
	root, dir, portico, out string
	dur, closedDur, pause   time.Duration
	mults                   []float64
	maxInFlight             int
	maxWait                 time.Duration
	workers                 int
	lowFactor               float64
	backend, generator      string
	conns                   int
	floor                   bool
}

func parseOverload(args []string, stderr io.Writer) (overloadFlags, error) {
	var f overloadFlags
	fs := flag.NewFlagSet("overload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.root, "root", ".", "the module root `DIR` to build from")
	fs.StringVar(&f.dir, "dir", "", "work `DIR` for binaries, logs and results (default: a new temporary directory)")
	fs.StringVar(&f.portico, "portico", "", "a prebuilt portico `BINARY` (default: build ./cmd/portico), e.g. one built from main for before figures")
	fs.StringVar(&f.out, "out", "", "write the JSON figures to `FILE`")
	fs.DurationVar(&f.dur, "duration", 30*time.Second, "open-loop load per rate")
	fs.DurationVar(&f.closedDur, "closed", 10*time.Second, "closed-loop capacity measurement")
	fs.DurationVar(&f.pause, "pause", 2*time.Second, "rest between phases")
	mults := fs.String("mults", "1,2,4", "open-loop rates as multiples of the capacity")
	fs.IntVar(&f.maxInFlight, "max-in-flight", 0, "the edge's shed.max_in_flight; 0 writes no shed section (the binary's default)")
	fs.DurationVar(&f.maxWait, "max-wait", 0, "the edge's shed.max_wait")
	fs.IntVar(&f.workers, "workers", 64, "closed-loop concurrency")
	fs.StringVar(&f.backend, "backend", "memory", "what the edge forwards to: memory (benchedge's trivial InventoryService) or inventory (portico inventory on SQLite)")
	fs.StringVar(&f.generator, "generator", "lean", "load generator: lean (benchedge load) or vegeta")
	fs.IntVar(&f.conns, "conns", 256, "open loop's connections (lean generator)")
	fs.BoolVar(&f.floor, "floor", true, "measure net/http's floor: a bare server answering a prebuilt 503 on the edge's CPU, closed loop")
	fs.Float64Var(&f.lowFactor, "low", 0.4, "the unloaded reference rate as a multiple of the capacity")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	for _, m := range strings.Split(*mults, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(m), 64)
		if err != nil || x <= 0 {
			return f, fmt.Errorf("-mults: bad multiple %q", m)
		}
		f.mults = append(f.mults, x)
	}
	return f, nil
}

// OverloadReport is the JSON output of `benchedge overload`.
type OverloadReport struct {
	Date        string  `json:"date"`
	Machine     string  `json:"machine"`
	MaxInFlight int     `json:"maxInFlight"`
	CapacityRPS float64 `json:"capacityRps"`
	// RefusalCostRatio is the edge's CPU per refused request (shed-only:
	// the cap held full, closed loop) over its CPU per served request
	// (capacity), both saturated.
	RefusalCostRatio float64 `json:"refusalCostRatio,omitempty"`
	// FloorCostRatio is the same ratio for net/http alone answering a
	// prebuilt 503 (benchedge floor, same CPU, same timeouts): the least
	// any refusal through net/http costs on this machine.
	FloorCostRatio float64 `json:"floorCostRatio,omitempty"`
	// Invalid says why the figures are not the edge's (empty: valid): the
	// capacity phase must find the edge at least 90% busy, as bench-edge's
	// rounds must, or the edge did not have its CPU to itself (another
	// process on it, or the load CPU saturated) and every ratio to the
	// capacity is a ratio to a machine's contention.
	Invalid string `json:"invalid,omitempty"`
	// Phases are every phase in order. Open-loop ones also carry their
	// load as sent (SentMult), the goodput the refusal's cost allows at it
	// (Bound, from RefusalCostRatio unrounded) and their goodput over it;
	// one whose generator sent under 95% of the offered rate says Why.
	Phases []Phase `json:"phases"`
}

// overload runs the load-shedding benchmark.
func overload(ctx context.Context, f overloadFlags, stdout, stderr io.Writer) error {
	dir := f.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "benchedge-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	bins, err := buildBins(ctx, f.root, dir, f.portico)
	if err != nil {
		return err
	}
	edge, inv, edgeURL, err := startEdgeAndInventory(ctx, bins.portico, dir, f.backend, f.maxInFlight, f.maxWait)
	defer edge.stop()
	defer inv.stop()
	if err != nil {
		return err
	}
	targets := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(targets, []byte("GET "+edgeURL+"/api/inventory/"+benchSKU+"\nAuthorization: Bearer demo-read-token\n"), 0o644); err != nil {
		return err
	}
	rep := OverloadReport{Date: time.Now().UTC().Format(time.RFC3339), Machine: machine(), MaxInFlight: f.maxInFlight}
	// phaseOn offers a's load to sut at url; the phase counts sut's CPU,
	// and the generator's and the backend's (the load CPU's).
	phaseOn := func(name string, a attack, sut *proc, url string) (Phase, error) {
		a.vegeta, a.targets, a.out = bins.vegeta, targets, filepath.Join(dir, name+".bin")
		a.generator, a.url, a.token, a.conns = f.generator, url+"/api/inventory/"+benchSKU, "demo-read-token", f.conns
		c0, _ := sut.cpuTime()
		s0 := sut.sysTime()
		b0, _ := inv.cpuTime()
		rs, err := a.run(ctx)
		c1, _ := sut.cpuTime()
		s1 := sut.sysTime()
		b1, _ := inv.cpuTime()
		if err != nil {
			return Phase{}, err
		}
		p := summarize(name, a, rs, c1-c0)
		if p.Requests > 0 {
			p.SUTSysUs = round(float64((s1-s0).Microseconds())/float64(p.Requests), 1)
		}
		if rs.Seconds > 0 {
			p.LoadBusy = round((rs.GeneratorCPU+b1-b0).Seconds()/rs.Seconds, 2)
		}
		fmt.Fprintf(stderr, "%s: %+v\n", name, p)
		time.Sleep(f.pause)
		return p, nil
	}
	phase := func(name string, a attack) (Phase, error) { return phaseOn(name, a, edge, edgeURL) }
	workers := f.workers // closed loop within the cap, so the capacity is what the edge serves
	if f.maxInFlight > 0 {
		workers = min(workers, f.maxInFlight)
	}
	if _, err := phase("warmup", attack{workers: workers, dur: 3 * time.Second}); err != nil {
		return err
	}
	capPhase, err := phase("capacity", attack{workers: workers, dur: f.closedDur})
	if err != nil {
		return err
	}
	rep.CapacityRPS = capPhase.GoodputRPS
	rep.Invalid = invalidCapacity(capPhase)
	rep.Phases = append(rep.Phases, capPhase)
	// refusal is a refusal's CPU over a served request's (0: not measured).
	var refusal float64
	if f.maxInFlight > 0 && f.maxInFlight <= 100 { // within the upstream bulkhead, which would refuse more holds
		release, err := fillCap(ctx, edgeURL, f.maxInFlight)
		if err != nil {
			release()
			return err
		}
		p, err := phase("shed-only", attack{workers: f.workers, dur: f.closedDur})
		release()
		if err != nil {
			return err
		}
		rep.Phases = append(rep.Phases, p)
		if capPhase.SUTCPUus > 0 {
			refusal = p.SUTCPUus / capPhase.SUTCPUus
			rep.RefusalCostRatio = round(refusal, 3)
		}
	}
	if f.floor {
		p, err := floorPhase(ctx, dir, attack{workers: f.workers, dur: f.closedDur}, phaseOn)
		if err != nil {
			return err
		}
		rep.Phases = append(rep.Phases, p)
		if capPhase.SUTCPUus > 0 {
			rep.FloorCostRatio = round(p.SUTCPUus/capPhase.SUTCPUus, 3)
		}
	}
	rates := []struct {
		name string
		mult float64
	}{{fmt.Sprintf("%.1fx", f.lowFactor), f.lowFactor}}
	for _, m := range f.mults {
		rates = append(rates, struct {
			name string
			mult float64
		}{fmt.Sprintf("%gx", m), m})
	}
	for _, r := range rates {
		p, err := phase(r.name, attack{rate: int(r.mult * rep.CapacityRPS), dur: f.dur})
		if err != nil {
			return err
		}
		openLoopBound(&p, rep.CapacityRPS, refusal)
		rep.Phases = append(rep.Phases, p)
	}
	writeOverloadTable(stdout, rep)
	if f.out != "" {
		if err := os.MkdirAll(filepath.Dir(f.out), 0o755); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(rep, "", "  ")
		return os.WriteFile(f.out, append(b, '\n'), 0o644)
	}
	return nil
}

type binaries struct{ portico, vegeta string }

func buildBins(ctx context.Context, root, dir, portico string) (binaries, error) {
	var b binaries
	var err error
	if b.portico = portico; b.portico == "" {
		if b.portico, err = goBuild(ctx, root, dir, "portico", "./cmd/portico", ""); err != nil {
			return b, err
		}
	}
	b.vegeta, err = goBuild(ctx, root, dir, "vegeta", "github.com/tsenart/vegeta/v12", "tools/go.mod")
	return b, err
}

// startEdgeAndInventory starts the backend (the inventory service on SQLite
// with the seed catalogue, or benchedge's in-memory one) on the load CPU and the edge alone on the other, with the
// dev profile's tokens and its access log to a file.
func startEdgeAndInventory(ctx context.Context, portico, dir, backend string, maxInFlight int, maxWait time.Duration) (edge, inv *proc, url string, err error) {
	ports := make([]int, 4)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return nil, nil, "", err
		}
	}
	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	switch backend {
	case "inventory":
		inv, err = start("inventory", loadCPU, false, filepath.Join(dir, "inventory.log"), portico,
			"inventory", "--listen", addr(ports[1]), "--db", filepath.Join(dir, "inventory.db"))
	case "memory":
		var self string
		if self, err = os.Executable(); err == nil {
			inv, err = start("backend", loadCPU, false, filepath.Join(dir, "backend.log"), self, "backend", "--listen", addr(ports[1]))
		}
	default:
		err = fmt.Errorf("-backend %q: want memory or inventory", backend)
	}
	if err != nil {
		return nil, nil, "", err
	}
	if err := waitTCP(ctx, addr(ports[1]), 20*time.Second); err != nil {
		return nil, inv, "", err
	}
	cfg := config.Dev(ports[0])
	for i, p := range ports[1:] {
		cfg.Upstreams[i].Addresses = []string{addr(p)} // payment and order are not started: only /health uses them
	}
	// Long enough for the shed-only phase's held requests.
	cfg.Upstreams[0].Timeout, cfg.Routes.MaxTimeout = 2*time.Minute, 2*time.Minute
	cfg.ShutdownGrace = 2 * time.Minute // the config refuses a route timeout longer than the drain
	cfg.Limits = config.LimitsConfig{}  // the dev profile's rate limits would answer 429 long before the edge is loaded
	cfg.Shed = config.ShedConfig{}
	if maxInFlight != 0 {
		// The generator is one caller at one address: the per-caller
		// and per-client caps (a quarter of max_in_flight) would answer
		// it 429 TOO_MANY_IN_FLIGHT long before the edge's cap is full.
		cfg.Shed = config.ShedConfig{MaxInFlight: maxInFlight, MaxWait: maxWait, MaxInFlightPerCaller: -1, MaxInFlightPerClient: -1}
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, inv, "", err
	}
	cfgPath := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		return nil, inv, "", err
	}
	edge, err = start("gateway", sutCPU, true, filepath.Join(dir, "gateway.log"), portico, "gateway", "--config", cfgPath)
	if err != nil {
		return nil, inv, "", err
	}
	url = "http://" + addr(ports[0])
	return edge, inv, url, waitHTTP(ctx, url+"/healthz/live", 20*time.Second)
}

// fillCap takes every slot of the edge's cap with requests the backend
// holds, and waits until a probe is refused; release ends them.
func fillCap(ctx context.Context, edgeURL string, n int) (release func(), err error) {
	hctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	release = func() { cancel(); wg.Wait() }
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}}
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(hctx, http.MethodGet, edgeURL+"/api/inventory/"+holdSKU+strconv.Itoa(i), nil)
			req.Header.Set("Authorization", "Bearer demo-read-token")
			// A probe below may take a slot first and get this hold shed:
			// then it asks again, or the cap would never fill.
			for {
				resp, err := client.Do(req)
				if err != nil {
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusServiceUnavailable || hctx.Err() != nil {
					return
				}
			}
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, edgeURL+"/api/inventory/"+benchSKU, nil)
		req.Header.Set("Authorization", "Bearer demo-read-token")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				return release, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return release, fmt.Errorf("the edge's cap of %d did not fill within 20s", n)
}

func writeOverloadTable(w io.Writer, rep OverloadReport) {
	fmt.Fprintf(w, "capacity (closed loop): %.0f req/s; max_in_flight %d; refusal/served CPU %.3f (net/http floor %.3f); %s; %s\n\n",
		rep.CapacityRPS, rep.MaxInFlight, rep.RefusalCostRatio, rep.FloorCostRatio, rep.Machine, rep.Date)
	if rep.Invalid != "" {
		fmt.Fprintf(w, "**INVALID** (%s): compare CPU per request only.\n\n", rep.Invalid)
	}
	fmt.Fprintln(w, "| phase | offered/s | sent/s | goodput 2xx/s | goodput/capacity | bound | goodput/bound | 2xx p50 ms | 2xx p99 ms | 503 | 503 p99 ms | other | edge CPU µs/req (kernel) | edge busy | load CPU busy |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range rep.Phases {
		name, offered := p.Name, strconv.Itoa(p.OfferedRPS)
		if p.Why != "" {
			name += "*"
		}
		if p.OfferedRPS == 0 {
			offered = "closed c=" + strconv.Itoa(p.Workers)
		}
		bound, ofBound := boundCells(p)
		fmt.Fprintf(w, "| %s | %s | %.0f | %.0f | %.2f | %s | %s | %.2f | %.2f | %d | %.2f | %d | %.1f (%.1f) | %.2f | %.2f |\n",
			name, offered, p.SentRPS, p.GoodputRPS, p.GoodputRPS/max(rep.CapacityRPS, 1), bound, ofBound, p.OKP50ms, p.OKP99ms,
			p.Shed, p.ShedP99ms, p.Other, p.SUTCPUus, p.SUTSysUs, p.SUTBusy, p.LoadBusy)
	}
	writeOverloadSummary(w, rep)
	writePhaseNotes(w, rep)
}

// machine describes the host: CPU model and count, kernel.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs", model, numCPU())
}

// floorPhase starts `benchedge floor` alone on the edge's CPU (the edge,
// idle then, stays there) and measures it closed loop with phaseOn.
func floorPhase(ctx context.Context, dir string, a attack,
	phaseOn func(string, attack, *proc, string) (Phase, error)) (Phase, error) {
	fl, url, err := startFloor(ctx, dir)
	defer fl.stop()
	if err != nil {
		return Phase{}, err
	}
	return phaseOn("net/http floor", a, fl, url)
}

// startFloor starts `benchedge floor` on the SUT CPU with GOMAXPROCS=1, as
// the systems under test are started, and waits until it listens; the
// caller stops it (stop on a nil proc does nothing).
func startFloor(ctx context.Context, dir string) (fl *proc, url string, err error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	fl, err = start("floor", sutCPU, true, filepath.Join(dir, "floor.log"), self, "floor", "-listen", addr)
	if err != nil {
		return nil, "", err
	}
	return fl, "http://" + addr, waitTCP(ctx, addr, 20*time.Second)
}

// invalidCapacity says why a capacity phase does not measure the edge,
// or "": the edge must be at least 90% busy, as in bench-edge's rounds.
func invalidCapacity(p Phase) string {
	if p.SUTBusy >= 0.9 {
		return ""
	}
	return fmt.Sprintf("capacity phase: edge %.0f%% busy (< 90%%), load CPU %.0f%%: the edge did not have its CPU to itself",
		100*p.SUTBusy, 100*p.LoadBusy)
}
