package browsertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// DefaultTimeout bounds a whole scenario when Options.Timeout is zero.
const DefaultTimeout = 2 * time.Minute

// DefaultStepTimeout is playwright's timeout for each action and wait
// (click, fill, waitFor...) when Options.StepTimeout is zero.
const DefaultStepTimeout = 30 * time.Second

// Options are one scenario's inputs.
type Options struct {
	URL    string // ctx.url
	Params any    // ctx.params, as JSON
	// Ask answers the scenario's ctx.ask(name, data): the test acts (kills
	// a process, reloads a config) while the page stays open. Its value is
	// the scenario's reply; an error rejects the scenario's promise.
	Ask         func(name string, data json.RawMessage) (any, error)
	Timeout     time.Duration // the whole scenario; DefaultTimeout when zero
	StepTimeout time.Duration // each playwright action; DefaultStepTimeout when zero
	Screenshots string        // the folder; ScreenshotDir(t) when empty
}

// Result is what a scenario saw.
type Result struct {
	Data        json.RawMessage // the scenario's return value
	Requests    []Request       // every request the page made, in finish order
	Console     []string        // "type: text" of every console message
	PageErrors  []string        // uncaught exceptions in the page
	Screenshots []string        // the files written, in order
}

// Request is one request the page made.
type Request struct {
	URL          string `json:"url"`
	Method       string `json:"method"`
	ResourceType string `json:"resourceType"`
	Status       int    `json:"status"`
	Bytes        int64  `json:"bytes"` // headers and body as transferred
	Failure      string `json:"failure,omitempty"`
}

// Hosts returns the host:port of every http(s) request, sorted, each once
// (data: and blob: URLs have none).
func (r Result) Hosts() []string {
	var hosts []string
	for _, q := range r.Requests {
		u, err := url.Parse(q.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		if !slices.Contains(hosts, u.Host) {
			hosts = append(hosts, u.Host)
		}
	}
	slices.Sort(hosts)
	return hosts
}

// TransferredBytes sums the bytes of every response the page received.
func (r Result) TransferredBytes() int64 {
	var n int64
	for _, q := range r.Requests {
		n += q.Bytes
	}
	return n
}

// message is one line of the runner's stdout.
type message struct {
	Ask    string          `json:"ask"`
	Data   json.RawMessage `json:"data"`
	Error  string          `json:"error"`
	Result *struct {
		Data        json.RawMessage `json:"data"`
		Requests    []Request       `json:"requests"`
		Console     []string        `json:"console"`
		PageErrors  []string        `json:"pageErrors"`
		Screenshots []string        `json:"screenshots"`
	} `json:"result"`
}

// Run runs the scenario module at path (relative to the test's package
// directory, or absolute) and returns what it saw. A scenario that throws
// fails t with its error, console and page errors; a screenshot named
// "failure" is taken first.
func (b *Browser) Run(t testing.TB, path string, opt Options) Result {
	t.Helper()
	res, err := b.run(t, path, opt)
	if err != nil {
		t.Fatalf("browser scenario %s: %v\nconsole:\n%s\npage errors:\n%s\nscreenshots: %v",
			path, err, lines(res.Console), lines(res.PageErrors), res.Screenshots)
	}
	return res
}

func (b *Browser) run(t testing.TB, path string, opt Options) (Result, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Result{}, err
	}
	if opt.Timeout == 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.StepTimeout == 0 {
		opt.StepTimeout = DefaultStepTimeout
	}
	if opt.Screenshots == "" {
		opt.Screenshots = ScreenshotDir(t)
	}
	input, err := json.Marshal(map[string]any{
		"url": opt.URL, "params": opt.Params, "shots": opt.Screenshots,
		"timeoutMs": opt.StepTimeout.Milliseconds(), "chromium": b.Chromium,
	})
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(t.Context(), opt.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.Node, b.runner, abs)
	cmd.Env = append(os.Environ(), ModulesEnv+"="+b.Modules, "PORTICO_BROWSER_INPUT="+string(input))
	setGroup(cmd) // a timeout kills node and the Chromium it started
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return Result{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	res, protoErr := converse(stdout, stdin, opt.Ask)
	_ = stdin.Close()
	waitErr := cmd.Wait()
	if s := stderr.String(); s != "" {
		t.Logf("browser scenario %s stderr:\n%s", path, s)
	}
	switch {
	case protoErr != nil:
		return res, protoErr
	case ctx.Err() != nil:
		return res, fmt.Errorf("timed out after %v", opt.Timeout)
	case waitErr != nil:
		return res, fmt.Errorf("runner: %v", waitErr)
	}
	return res, nil
}

// converse reads the runner's lines, answers its asks, and returns its
// result.
func converse(stdout io.Reader, stdin io.Writer, ask func(string, json.RawMessage) (any, error)) (Result, error) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return Result{}, fmt.Errorf("runner wrote %q: %v", sc.Text(), err)
		}
		if m.Ask != "" {
			if err := answer(stdin, m.Ask, m.Data, ask); err != nil {
				return Result{}, err
			}
			continue
		}
		var res Result
		if r := m.Result; r != nil {
			res = Result{Data: r.Data, Requests: r.Requests, Console: r.Console, PageErrors: r.PageErrors, Screenshots: r.Screenshots}
		}
		if m.Error != "" {
			return res, fmt.Errorf("%s", m.Error)
		}
		return res, nil
	}
	if err := sc.Err(); err != nil {
		return Result{}, err
	}
	return Result{}, fmt.Errorf("runner ended without a result")
}

func answer(stdin io.Writer, name string, data json.RawMessage, ask func(string, json.RawMessage) (any, error)) error {
	reply := map[string]any{}
	switch {
	case ask == nil:
		reply["error"] = "the test passed no Options.Ask"
	default:
		v, err := ask(name, data)
		if err != nil {
			reply["error"] = err.Error()
		} else {
			reply["reply"] = v
		}
	}
	b, err := json.Marshal(reply)
	if err != nil {
		return err
	}
	_, err = stdin.Write(append(b, '\n'))
	return err
}

func lines(ss []string) string {
	var b bytes.Buffer
	for _, s := range ss {
		b.WriteString("  " + s + "\n")
	}
	return b.String()
}
