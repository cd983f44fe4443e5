package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
)

// compareFlags are `benchedge edge`'s settings (make bench-edge).
type compareFlags struct {
	root, dir, portico, out string
	round, serial, open     time.Duration
	rounds, conns           int
	vanguard                bool
	idle                    int
	perf                    string
}

func parseCompare(args []string, stderr io.Writer) (compareFlags, error) {
	var f compareFlags
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.root, "root", ".", "the module root `DIR` to build from")
	fs.StringVar(&f.dir, "dir", "", "work `DIR` (default: a new temporary directory)")
	fs.StringVar(&f.portico, "portico", "", "a prebuilt portico `BINARY` (default: build ./cmd/portico)")
	fs.StringVar(&f.out, "out", "", "write FILE.json, FILE.md and FILE.svg from this `FILE` prefix")
	fs.DurationVar(&f.round, "round", 10*time.Second, "closed-loop round per system")
	fs.IntVar(&f.rounds, "rounds", 3, "interleaved closed-loop rounds")
	fs.IntVar(&f.conns, "conns", 64, "closed-loop concurrency")
	fs.DurationVar(&f.serial, "serial", 6*time.Second, "serial (c=1) latency phase per system, split over the interleaved rounds")
	fs.DurationVar(&f.open, "open", 10*time.Second, "open-loop phase per system at 0.5x stock's throughput")
	fs.BoolVar(&f.vanguard, "vanguard", true, "include vanguard-go (c)")
	fs.StringVar(&f.perf, "perf", "", "record a Linux perf CPU profile of this `SYSTEM` (a key: d, e, ...) during its first closed-loop round, into the work dir")
	fs.IntVar(&f.idle, "idle", idleConns, "idle keep-alive connections held open to (b), (d) and (e) for their RSS per connection; 0 skips")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if f.perf != "" && f.dir == "" {
		return f, errors.New("-perf needs -dir: the profile is written there")
	}
	return f, nil
}

// system is one system under test.
type system struct {
	Key, Name string
	grpcAddr  string // (a): called over gRPC
	url       string // the others: GET url
	token     string
	extra     []string // more flags of the generator (method, body, headers)
	proc      *proc
}

// Round is one closed-loop round of one system, valid or not: a round
// that fails a gate is reported with why, never dropped.
type Round struct {
	System   string  `json:"system"`
	Round    int     `json:"round"`
	RPS      float64 `json:"rps"`
	CPUus    float64 `json:"cpuUsPerRequest"`
	Busy     float64 `json:"sutBusy"`
	StealPct float64 `json:"stealPct"`
	Non2xx   int     `json:"non2xx"`
	Valid    bool    `json:"valid"`
	Why      string  `json:"why,omitempty"`
}

// Summary is one system's figures.
type Summary struct {
	Key         string    `json:"key"`
	Name        string    `json:"name"`
	RPS         []float64 `json:"rps"`
	MedianRPS   float64   `json:"medianRps"`
	MedianCPUus float64   `json:"medianCpuUsPerRequest"`
	SerialP50us float64   `json:"serialP50us"`
	SerialP99us float64   `json:"serialP99us"`
	// SerialRoundP50us is each serial round's own p50, for the spread.
	SerialRoundP50us []float64 `json:"serialRoundP50us"`
	OpenRate         int       `json:"openRate"`
	OpenP50ms        float64   `json:"openP50ms"`
	OpenP99ms        float64   `json:"openP99ms"`
	OpenNon2xx       int       `json:"openNon2xx"`
	// IdleConnKiB is the RSS growth per idle keep-alive HTTP/1.1
	// connection (make bench-edge -idle, (b), (d) and (e) only).
	IdleConnKiB float64 `json:"idleConnKiB,omitempty"`
	// CreateOrderCPUus is the median CPU per POST /api/orders ((d) and
	// (dd) only).
	CreateOrderCPUus float64 `json:"createOrderCpuUsPerRequest,omitempty"`
	Equivalent       bool    `json:"equivalent"`
	EquivNote        string  `json:"equivalenceNote,omitempty"`
}

// EdgeReport is make bench-edge's JSON output.
type EdgeReport struct {
	Date         string             `json:"date"`
	Machine      string             `json:"machine"`
	RoundSeconds float64            `json:"roundSeconds"`
	Systems      []*Summary         `json:"systems"`
	Rounds       []Round            `json:"rounds"`
	Ratios       map[string]float64 `json:"ratios"`
	// IdleFloorKiB is net/http's own RSS growth per idle keep-alive
	// HTTP/1.1 connection (benchedge floor, measured as IdleConnKiB is):
	// what no net/http server can go under.
	IdleFloorKiB float64 `json:"idleFloorKiB,omitempty"`
}

func compare(ctx context.Context, f compareFlags, stdout, stderr io.Writer) error {
	dir := f.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "benchedge-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	portico := f.portico
	if portico == "" {
		var err error
		if portico, err = goBuild(ctx, f.root, dir, "portico", "./cmd/portico", ""); err != nil {
			return err
		}
	}
	systems, procs, err := startSystems(ctx, dir, portico, f.vanguard)
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	if err != nil {
		return err
	}
	rep := EdgeReport{Date: time.Now().UTC().Format(time.RFC3339), Machine: machine(), RoundSeconds: f.round.Seconds(),
		Ratios: map[string]float64{}}
	sums := map[string]*Summary{}
	for _, s := range systems {
		sum := &Summary{Key: s.Key, Name: s.Name}
		sum.Equivalent, sum.EquivNote = equivalent(ctx, s)
		if d := sums["d"]; d != nil && sum.Equivalent && (s.Key == "e" || s.Key == "dd") {
			sum.Equivalent, sum.EquivNote = equivalentTo(ctx, systemByKey(systems, "d"), s)
		}
		sums[s.Key] = sum
		rep.Systems = append(rep.Systems, sum)
	}
	if err := idlePhase(ctx, systems, sums, f.idle, stderr); err != nil {
		return err
	}
	if rep.IdleFloorKiB, err = idleFloor(ctx, dir, f.idle, stderr); err != nil {
		return err
	}
	for r := 1; r <= f.rounds; r++ { // interleaved: every system once per round
		for _, s := range systems {
			rd, err := closedRound(ctx, s, f, r)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "%+v\n", rd)
			rep.Rounds = append(rep.Rounds, rd)
			sums[s.Key].RPS = append(sums[s.Key].RPS, rd.RPS)
		}
	}
	for _, s := range systems {
		sum := sums[s.Key]
		sum.MedianRPS = median(sum.RPS)
		var cpus []float64
		for _, rd := range rep.Rounds {
			if rd.System == s.Key {
				cpus = append(cpus, rd.CPUus)
			}
		}
		sum.MedianCPUus = median(cpus)
	}
	if err := serialPhase(ctx, systems, sums, f, stderr); err != nil {
		return err
	}
	if err := createOrderPhase(ctx, systems, sums, f, stderr); err != nil {
		return err
	}
	if b := sums["b"]; b != nil && b.MedianRPS > 0 {
		rate := int(b.MedianRPS / 2)
		for _, s := range systems {
			res, err := offer(ctx, s, f.conns, rate, f.open)
			if err != nil {
				return err
			}
			sum := sums[s.Key]
			sum.OpenRate = rate
			sum.OpenP50ms, sum.OpenP99ms = quantileMs(res.Latency[200], .50), quantileMs(res.Latency[200], .99)
			for code, n := range res.Codes {
				if code < 200 || code > 299 {
					sum.OpenNon2xx += n
				}
			}
			sum.OpenNon2xx += res.Unsent
		}
	}
	ratios(&rep, sums)
	writeCompareTable(stdout, rep)
	if f.out == "" {
		return nil
	}
	return writeCompareFiles(f.out, rep)
}

// startSystems starts the backends and every system under test on the
// SUT CPU; only the one under load runs at a time.
func startSystems(ctx context.Context, dir, portico string, withVanguard bool) ([]*system, []*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	var procs []*proc
	port := func() string {
		p, _ := freePort()
		return "127.0.0.1:" + strconv.Itoa(p)
	}
	run := func(name string, cpu int, solo bool, bin string, args ...string) (*proc, error) {
		p, err := start(name, cpu, solo, filepath.Join(dir, name+".log"), bin, args...)
		if err == nil {
			procs = append(procs, p)
		}
		return p, err
	}
	backend, sutBackend := port(), port()
	if _, err := run("backend", loadCPU, false, self, "backend", "-listen", backend); err != nil {
		return nil, procs, err
	}
	a, err := run("direct", sutCPU, true, self, "backend", "-listen", sutBackend)
	if err != nil {
		return nil, procs, err
	}
	for _, addr := range []string{backend, sutBackend} {
		if err := waitTCP(ctx, addr, 20*time.Second); err != nil {
			return nil, procs, err
		}
	}
	systems := []*system{{Key: "a", Name: "direct gRPC", grpcAddr: sutBackend, proc: a}}
	path := "/api/inventory/" + benchSKU
	stockAddr := port()
	b, err := run("stock", sutCPU, true, self, "stock", "-listen", stockAddr, "-backend", backend)
	if err != nil {
		return nil, procs, err
	}
	systems = append(systems, &system{Key: "b", Name: "stock grpc-gateway", url: "http://" + stockAddr + path, proc: b})
	if withVanguard {
		vgAddr := port()
		c, err := run("vanguard", sutCPU, true, self, "vanguard", "-listen", vgAddr, "-backend", backend)
		if err != nil {
			return nil, procs, err
		}
		systems = append(systems, &system{Key: "c", Name: "vanguard-go", url: "http://" + vgAddr + path, proc: c})
	}
	set, err := writeDescriptorSet(dir)
	if err != nil {
		return nil, procs, err
	}
	for _, v := range []struct {
		key, name string
		full      bool
		desc      bool
	}{{"d", "Portico edge (production shape)", true, false}, {"d0", "Portico edge (optional layers off)", false, false},
		{"dd", "Portico edge (production shape, descriptor path)", true, true}} {
		listen := port()
		cfg := edgeConfig(listen, backend, port(), backend, v.full) // the backend serves OrderService too
		if v.desc {
			toDescriptors(&cfg, set)
		}
		b, err := yaml.Marshal(cfg)
		if err != nil {
			return nil, procs, err
		}
		cfgPath := filepath.Join(dir, "gateway-"+v.key+".yaml")
		if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
			return nil, procs, err
		}
		level := "info"
		if !v.full {
			level = "error" // no access line
		}
		p, err := run("gateway-"+v.key, sutCPU, true, portico, "gateway", "--log-level="+level, "--config", cfgPath)
		if err != nil {
			return nil, procs, err
		}
		systems = append(systems, &system{Key: v.key, Name: v.name, url: "http://" + listen + path, token: "demo-read-token", proc: p})
	}
	eAddr := port()
	e, err := run("assembled", sutCPU, true, self, "assembled", "-listen", eAddr, "-backend", backend)
	if err != nil {
		return nil, procs, err
	}
	systems = append(systems, &system{Key: "e", Name: "grpc-gateway + assembled middleware", url: "http://" + eAddr + path, token: "demo-read-token", proc: e})
	for _, s := range systems[1:] {
		if err := waitTCP(ctx, strings.TrimPrefix(strings.TrimSuffix(s.url, path), "http://"), 20*time.Second); err != nil {
			return nil, procs, err
		}
	}
	return systems, procs, nil
}

// edgeConfig is the edge's config for (d), every default layer on and its
// access log to a file and rate limits that never refuse (three layers on
// the route: caller, the route's group, global, as system (e) has), or for (d0),
// whatever the config can turn off turned off (no retries, no ejection, no
// health checking, no in-flight cap, no rate limits); authentication,
// routing and the breaker and bulkhead stay.
func edgeConfig(listen, inventory, payment, order string, full bool) config.Config {
	cfg := config.Dev(43100)
	cfg.Listen = listen
	cfg.Upstreams[0].Addresses = []string{inventory}
	cfg.Upstreams[1].Addresses = []string{payment} // not started: only /health would use them
	cfg.Upstreams[2].Addresses = []string{order}
	cfg.AdminListen = "" // no admin listener: two edges run side by side
	cfg.Shed = config.ShedConfig{MaxInFlight: config.DefaultMaxInFlight}
	// Rate limits are on in production shape, each layer far above what
	// one machine can offer, so they cost their decision and never refuse.
	cfg.Limits = config.DevLimits()
	cfg.Limits.Plans = map[string]config.LimitConfig{"default": {Rate: 1_000_000, Burst: 1_000_000}}
	cfg.Limits.Groups = []config.LimitGroupConfig{{Name: "inventory-reads", Routes: []string{"GET /api/inventory/{sku}"},
		Limit: config.LimitConfig{Rate: 1_000_000, Burst: 1_000_000}}}
	cfg.Limits.Global = &config.LimitConfig{Rate: 1_000_000, Burst: 1_000_000}
	if !full {
		cfg.Limits = config.LimitsConfig{}
		off := false
		cfg.Shed.MaxInFlight = -1
		for i := range cfg.Upstreams {
			cfg.Upstreams[i].Resilience = interceptors.Config{
				Retry:       interceptors.RetryConfig{MaxAttempts: 1},
				HealthCheck: interceptors.HealthCheckConfig{Enabled: &off},
				Ejection:    interceptors.EjectionConfig{ConsecutiveFailures: -1},
			}
		}
	}
	return cfg
}

// closedRound runs one closed-loop round against s and checks the gates.
func closedRound(ctx context.Context, s *system, f compareFlags, n int) (Round, error) {
	if f.perf == s.Key && n == 1 {
		wait, err := perfRecord(ctx, s, f.dir, f.round)
		if err != nil {
			return Round{}, err
		}
		defer func() { _ = wait() }()
	}
	st0 := readSteal(sutCPU)
	c0, _ := s.proc.cpuTime()
	res, err := offer(ctx, s, f.conns, 0, f.round)
	if err != nil {
		return Round{}, err
	}
	c1, _ := s.proc.cpuTime()
	st1 := readSteal(sutCPU)
	rd := Round{System: s.Key, Round: n}
	total, ok := 0, 0
	for code, k := range res.Codes {
		total += k
		if code < 200 || code > 299 {
			rd.Non2xx += k
		} else {
			ok += k
		}
	}
	if total > 0 && res.Seconds > 0 {
		rd.RPS = round1(float64(ok) / res.Seconds)
		rd.CPUus = round1(float64((c1 - c0).Microseconds()) / float64(total))
		rd.Busy = round(float64((c1-c0).Seconds())/res.Seconds, 2)
	}
	if tot := st1.total - st0.total; tot > 0 {
		rd.StealPct = round(100*float64(st1.steal-st0.steal)/float64(tot), 1)
	}
	var why []string
	if rd.Non2xx > 0 {
		why = append(why, fmt.Sprintf("%d non-2xx", rd.Non2xx))
	}
	if rd.Busy < 0.9 {
		why = append(why, fmt.Sprintf("SUT %.0f%% busy (< 90%%)", 100*rd.Busy))
	}
	if rd.StealPct >= 5 {
		why = append(why, fmt.Sprintf("steal %.1f%% (>= 5%%)", rd.StealPct))
	}
	rd.Valid, rd.Why = len(why) == 0, strings.Join(why, "; ")
	return rd, nil
}

func round1(x float64) float64 { return round(x, 1) }

// offer runs the generator against s on the load CPU: closed loop with
// conns when rate is 0, else open loop at rate.
func offer(ctx context.Context, s *system, conns, rate int, dur time.Duration) (LoadResult, error) {
	self, err := os.Executable()
	if err != nil {
		return LoadResult{}, err
	}
	args := []string{"load", "-url", s.url, "-token", s.token}
	if s.grpcAddr != "" {
		args = []string{"grpcload", "-addr", s.grpcAddr}
	}
	args = append(args, s.extra...)
	args = append(args, "-conns", strconv.Itoa(conns), "-rate", strconv.Itoa(rate), "-duration", dur.String())
	ctx, cancel := context.WithTimeout(ctx, dur+30*time.Second)
	defer cancel()
	argv := pinned(loadCPU, append([]string{self}, args...)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return LoadResult{}, fmt.Errorf("%s: generator: %w", s.Name, err)
	}
	var res LoadResult
	return res, json.Unmarshal(out, &res)
}

// equivalent fetches the item from s and compares it with the backend's
// answer in protojson, zero values dropped on both sides (stock
// grpc-gateway and Portico emit them, vanguard does not).
func equivalent(ctx context.Context, s *system) (bool, string) {
	want, _ := protojson.Marshal(newBackend().items[benchSKU])
	var got []byte
	if s.grpcAddr != "" {
		cc, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return false, err.Error()
		}
		defer cc.Close()
		it, err := inventoryv1.NewInventoryServiceClient(cc).GetItem(ctx, &inventoryv1.GetItemRequest{Sku: benchSKU})
		if err != nil {
			return false, err.Error()
		}
		got, _ = protojson.Marshal(it)
	} else {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
		if s.token != "" {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		got, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Sprintf("status %d: %s", resp.StatusCode, got)
		}
	}
	var w, g any
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
		return false, "not JSON: " + string(got)
	}
	if !jsonEqual(dropZero(w), dropZero(g)) {
		return false, fmt.Sprintf("answer %s, want %s", got, want)
	}
	return true, ""
}

func systemByKey(systems []*system, key string) *system {
	for _, s := range systems {
		if s.Key == key {
			return s
		}
	}
	return nil
}

func jsonEqual(a, b any) bool { return reflect.DeepEqual(a, b) }

// dropZero removes zero values (0, "0", "", false, null, empty objects
// and lists) from a decoded JSON value.
func dropZero(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e = dropZero(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		return x
	case string:
		if x == "" || x == "0" {
			return nil
		}
	case float64:
		if x == 0 {
			return nil
		}
	case bool:
		if !x {
			return nil
		}
	}
	return v
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// steal is the SUT CPU's steal and total jiffies from /proc/stat.
type steal struct{ steal, total int64 }

func readSteal(cpu int) steal {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return steal{}
	}
	prefix := "cpu" + strconv.Itoa(cpu) + " "
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		var st steal
		for i, fld := range strings.Fields(l)[1:] {
			n, _ := strconv.ParseInt(fld, 10, 64)
			if i < 8 { // user nice system idle iowait irq softirq steal
				st.total += n
			}
			if i == 7 {
				st.steal = n
			}
		}
		return st
	}
	return steal{}
}
