package bench

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"time"
)

// attack is one vegeta run.
type attack struct {
	generator  string // lean (benchedge load) or vegeta
	url, token string
	conns      int           // open loop's connections (lean)
	vegeta     string        // the binary
	targets    string        // targets file
	rate       int           // requests a second; 0 is closed loop with workers
	workers    int           // closed loop's concurrency
	dur        time.Duration // how long load is offered
	out        string        // results file
}

// run offers the load with the chosen generator.
func (a attack) run(ctx context.Context) (LoadResult, error) {
	if a.generator == "vegeta" {
		return a.runVegeta(ctx)
	}
	return a.runLean(ctx)
}

// runLean runs `benchedge load` pinned to the load CPU.
func (a attack) runLean(ctx context.Context) (LoadResult, error) {
	self, err := os.Executable()
	if err != nil {
		return LoadResult{}, err
	}
	conns := a.workers
	if a.rate > 0 {
		conns = a.conns
	}
	ctx, cancel := context.WithTimeout(ctx, a.dur+30*time.Second)
	defer cancel()
	argv := pinned(loadCPU, self, "load", "-url", a.url, "-token", a.token, "-conns", strconv.Itoa(conns),
		"-rate", strconv.Itoa(a.rate), "-duration", a.dur.String())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return LoadResult{}, fmt.Errorf("benchedge load: %w", err)
	}
	var res LoadResult
	err = json.Unmarshal(out, &res)
	res.GeneratorCPU = processCPU(cmd.ProcessState)
	return res, err
}

// processCPU is the user and system CPU time of an ended process.
func processCPU(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}

// pinned prefixes argv with taskset -c cpu when the machine has two CPUs.
func pinned(cpu int, argv ...string) []string {
	if runtime.NumCPU() >= 2 {
		if ts, err := exec.LookPath("taskset"); err == nil {
			return append([]string{ts, "-c", strconv.Itoa(cpu)}, argv...)
		}
	}
	return argv
}

// runVegeta offers the load with vegeta, bounded by dur plus a margin for
// the last answers (vegeta's -timeout).
func (a attack) runVegeta(ctx context.Context) (LoadResult, error) {
	args := []string{"attack", "-targets", a.targets, "-duration", a.dur.String(), "-timeout", "5s",
		"-output", a.out}
	if a.rate == 0 {
		args = append(args, "-rate", "0", "-max-workers", strconv.Itoa(a.workers), "-workers", strconv.Itoa(a.workers))
	} else {
		args = append(args, "-rate", strconv.Itoa(a.rate))
	}
	ctx, cancel := context.WithTimeout(ctx, a.dur+30*time.Second)
	defer cancel()
	argv := pinned(loadCPU, append([]string{a.vegeta}, args...)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return LoadResult{}, fmt.Errorf("vegeta attack: %w\n%s", err, b)
	}
	gen := processCPU(cmd.ProcessState)
	rs, err := a.decode(ctx)
	if err != nil {
		return LoadResult{}, err
	}
	res := fromResults(rs)
	res.GeneratorCPU = gen
	return res, nil
}

// fromResults folds vegeta's results into a LoadResult.
func fromResults(rs []result) LoadResult {
	res := LoadResult{Codes: map[int]int{}, Latency: map[int][]int64{}}
	if len(rs) == 0 {
		return res
	}
	first, last := rs[0].start, rs[0].start
	for _, r := range rs {
		if r.start.Before(first) {
			first = r.start
		}
		if end := r.start.Add(r.latency); end.After(last) {
			last = end
		}
		res.Codes[r.code]++
		res.Latency[r.code] = append(res.Latency[r.code], r.latency.Microseconds())
	}
	for _, l := range res.Latency {
		slices.Sort(l)
	}
	res.Seconds = round(last.Sub(first).Seconds(), 2)
	res.Scheduled = len(rs)
	return res
}

// result is one answered (or failed) request.
type result struct {
	start   time.Time
	code    int // 0: no answer (vegeta's error)
	latency time.Duration
}

// decode reads the results file through vegeta encode --to csv.
func (a attack) decode(ctx context.Context) ([]result, error) {
	cmd := exec.CommandContext(ctx, a.vegeta, "encode", "--to", "csv", a.out)
	cmd.Stderr = os.Stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var rs []result
	r := csv.NewReader(pipe)
	r.FieldsPerRecord = -1
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = cmd.Wait()
			return nil, fmt.Errorf("vegeta encode: %w", err)
		}
		if len(rec) < 3 {
			continue
		}
		ts, _ := strconv.ParseInt(rec[0], 10, 64)
		code, _ := strconv.Atoi(rec[1])
		lat, _ := strconv.ParseInt(rec[2], 10, 64)
		rs = append(rs, result{start: time.Unix(0, ts), code: code, latency: time.Duration(lat)})
	}
	return rs, cmd.Wait()
}

// Phase is the summary of one load phase.
type Phase struct {
	Name       string  `json:"name"`
	OfferedRPS int     `json:"offeredRps"` // 0: closed loop
	Workers    int     `json:"workers,omitempty"`
	Seconds    float64 `json:"seconds"`
	Requests   int     `json:"requests"`
	OK         int     `json:"ok"`
	Shed       int     `json:"shed"`
	Other      int     `json:"other"`
	SentRPS    float64 `json:"sentRps"`
	GoodputRPS float64 `json:"goodputRps"`
	OKP50ms    float64 `json:"okP50ms"`
	OKP99ms    float64 `json:"okP99ms"`
	ShedP50ms  float64 `json:"shedP50ms"`
	ShedP99ms  float64 `json:"shedP99ms"`
	SUTCPUus   float64 `json:"sutCpuUsPerRequest"`
	// SUTSysUs is the kernel's part of SUTCPUus (stime): what no
	// user-space HTTP server can remove.
	SUTSysUs float64 `json:"sutSysUsPerRequest"`
	SUTBusy  float64 `json:"sutBusy"`
	// LoadBusy is the generator's and the backend's CPU over the phase,
	// in cores: near 1, the load CPU is saturated, and the edge is
	// measured through a slow generator and a slow backend.
	LoadBusy   float64 `json:"loadBusy"`
	OtherCodes string  `json:"otherCodes,omitempty"`
	Unsent     int     `json:"unsent,omitempty"`
	// SentMult, Bound and GoodputOfBound are set on open-loop phases
	// (see openLoopBound): the load sent as a multiple of the capacity,
	// the goodput the refusal's cost allows at that load as a fraction of
	// the capacity (absent when no shed-only phase measured the cost;
	// 0 when nothing can be served), and the goodput over that bound.
	SentMult       float64  `json:"sentMult,omitempty"`
	Bound          *float64 `json:"bound,omitempty"`
	GoodputOfBound float64  `json:"goodputOfBound,omitempty"`
	// Why says why a phase does not measure what it is named for (empty:
	// it does), e.g. the generator sent under 95% of the offered rate.
	Why string `json:"why,omitempty"`
}

// summarize folds a LoadResult into a Phase; cpu is the system under
// test's CPU time over the phase.
func summarize(name string, a attack, res LoadResult, cpu time.Duration) Phase {
	p := Phase{Name: name, OfferedRPS: a.rate, Seconds: res.Seconds}
	if a.rate == 0 {
		p.Workers = a.workers
	}
	var ok, shed []int64
	others := map[int]int{}
	for code, n := range res.Codes {
		p.Requests += n
		switch {
		case code >= 200 && code < 300:
			ok = append(ok, res.Latency[code]...)
		case code == 503:
			shed = append(shed, res.Latency[code]...)
		default:
			others[code] += n
		}
	}
	if p.Requests == 0 || res.Seconds <= 0 {
		return p
	}
	secs := res.Seconds
	p.OK, p.Shed, p.Other = len(ok), len(shed), p.Requests-len(ok)-len(shed)
	p.Unsent = res.Unsent
	p.SentRPS = round(float64(p.Requests)/secs, 0)
	p.GoodputRPS = round(float64(len(ok))/secs, 0)
	p.OKP50ms, p.OKP99ms = quantileMs(ok, .50), quantileMs(ok, .99)
	p.ShedP50ms, p.ShedP99ms = quantileMs(shed, .50), quantileMs(shed, .99)
	p.SUTCPUus = round(float64(cpu.Microseconds())/float64(p.Requests), 1)
	p.SUTBusy = round(cpu.Seconds()/secs, 2)
	if len(others) > 0 {
		p.OtherCodes = fmt.Sprint(others)
	}
	return p
}

func quantileMs(us []int64, q float64) float64 {
	if len(us) == 0 {
		return 0
	}
	slices.Sort(us)
	return round(float64(us[min(len(us)-1, int(q*float64(len(us))))])/1000, 3)
}

func round(x float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(x*p+0.5)) / p
}
