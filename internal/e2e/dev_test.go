package e2e

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/pgtest"
	"github.com/portico-gateway/portico/internal/testproc"
)

// TestDev runs `portico dev` and checks what a new user sees: aggregated
// health over three dependencies, a 401 problem without a token, one trace
// id across all four processes, POST /api/orders answering 201 + Location +
// CONFIRMED; then a dead child shows DOWN, and SIGTERM stops everything.
func TestDev(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	base := testproc.FreePortRange(t, 10) // portico dev uses base..base+9 (admin listeners at base+4..7)
	dir := testproc.TempDir(t)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", dir)
	url := "http://" + testproc.Addr(base)
	testproc.WaitHTTP(t, dev, url+"/health")
	testproc.WaitDevReady(t, dev)

	t.Run("health aggregates three dependencies", func(t *testing.T) {
		r := call(t, "GET", url+"/health", "", "")
		var h struct {
			Status       string
			Service      string
			Dependencies []struct{ Name, Status string }
		}
		if err := json.Unmarshal(r.body, &h); err != nil || r.status != 200 || h.Status != "UP" || len(h.Dependencies) != 3 {
			t.Fatalf("GET /health = %d %s", r.status, r.body)
		}
	})
	t.Run("services refuse forged identities", func(t *testing.T) { checkDevIdentity(t, base, dir) })
	t.Run("no token is a 401 problem", func(t *testing.T) {
		r := call(t, "GET", url+"/api/inventory/keyboard-001", "", "")
		if r.status != 401 || r.code() != "UNAUTHENTICATED" || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("got %d %s, WWW-Authenticate %q", r.status, r.body, r.header.Get("WWW-Authenticate"))
		}
		checkProblem(t, r, "/api/inventory/keyboard-001")
	})
	t.Run("order with one trace id through four processes", func(t *testing.T) {
		r := call(t, "POST", url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: dev-1", "X-Trace-Id: trace-demo-2026")
		var o struct{ ID, Status string }
		_ = json.Unmarshal(r.body, &o)
		if r.status != 201 || o.Status != "CONFIRMED" || r.header.Get("Location") != "/api/orders/"+o.ID {
			t.Fatalf("POST /api/orders = %d %s, Location %q", r.status, r.body, r.header.Get("Location"))
		}
		if r.header.Get("X-Trace-Id") != "trace-demo-2026" {
			t.Errorf("X-Trace-Id = %q", r.header.Get("X-Trace-Id"))
		}
		want := map[string]bool{"gateway": false, "order": false, "inventory": false, "payment": false}
		ok := dev.WaitOutput(t.Context(), 10*time.Second, func(out string) bool {
			for svc := range servicesWithTrace(out, "trace-demo-2026") {
				want[svc] = true
			}
			return want["gateway"] && want["order"] && want["inventory"] && want["payment"]
		})
		if !ok {
			t.Errorf("trace id seen in %v, want all four", want)
		}
	})
	t.Run("a dead child shows DOWN and is not restarted", func(t *testing.T) {
		pid := childPid(t, dev.Output(), "inventory")
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		ok := testproc.WaitFor(t.Context(), 10*time.Second, func(_ ctxT) bool {
			r := call(t, "GET", url+"/health", "", "")
			return r.status == 503 && strings.Contains(string(r.body), `"DEGRADED"`) &&
				strings.Contains(string(r.body), `{"name":"inventory","status":"DOWN"}`)
		})
		if !ok {
			t.Fatalf("/health never showed inventory DOWN")
		}
		// The supervisor logs its decision not to restart; a restart,
		// delayed or not, would replace that record.
		inventory := func(msg string) func(map[string]any) bool {
			return func(r map[string]any) bool {
				return r["msg"] == msg && r["service"] == "dev" && r["child"] == "inventory"
			}
		}
		if !dev.WaitOutput(t.Context(), 10*time.Second, func(out string) bool { return len(records(out, inventory("child not restarted"))) > 0 }) {
			t.Fatal("the supervisor never logged that inventory is not restarted")
		}
		if n := len(records(dev.Output(), inventory("child started"))); n != 1 {
			t.Errorf("inventory started %d times, want 1 (no restart)", n)
		}
	})
	t.Run("SIGTERM stops every process", func(t *testing.T) {
		pids := []int{childPid(t, dev.Output(), "payment"), childPid(t, dev.Output(), "order"), childPid(t, dev.Output(), "gateway")}
		if err := dev.Stop(20 * time.Second); err != nil {
			t.Errorf("dev exit = %v, want clean", err)
		}
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("child %d still running after dev stopped", pid)
			}
		}
	})
}

// servicesWithTrace returns the services of the JSON log lines carrying id.
func servicesWithTrace(out, id string) map[string]bool {
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Service string
			TraceID string `json:"traceId"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.TraceID == id {
			seen[l.Service] = true
		}
	}
	return seen
}

// childPid finds a dev child's pid in the supervisor's "child started" line.
func childPid(t testing.TB, out, child string) int {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Msg, Child string
			Pid        int
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "child started" && l.Child == child {
			return l.Pid
		}
	}
	t.Fatalf("no child started line for %s", child)
	return 0
}

// TestDevExplainsAFailedStart: when a child cannot start (its port is
// taken, its PostgreSQL database is missing), `portico dev` stops the
// others and exits non-zero with one line saying what to do, instead of
// supervising what is left (or nothing).
func TestDevExplainsAFailedStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	tests := []struct {
		name  string
		taken int // the offset of the port a test listener holds; -1 none
		pg    bool
		want  func(base int) []string
	}{
		{"the edge's port is taken", 0, false, func(base int) []string {
			return []string{fmt.Sprintf("port %d (edge) is already in use", base), "try `portico dev --base-port "}
		}},
		{"a service's port is taken", 2, false, func(base int) []string {
			return []string{fmt.Sprintf("port %d (payment) is already in use", base+2), "--base-port"}
		}},
		// Another portico dev on the same ports answers the readiness
		// checks: this one must not announce itself ready for it (found
		// by the operator review).
		{"another edge answers on the port", 100, false, func(base int) []string {
			return []string{fmt.Sprintf("port %d (edge) is already in use", base), "--base-port"}
		}},
		{"the PostgreSQL database is missing", -1, true, func(int) []string {
			return []string{`PostgreSQL database "portico_missing_`, "does not exist", "createdb -h "}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"dev", "--data", testproc.TempDir(t)}
			if tt.pg {
				args = append(args, "--postgres", missingDatabaseURL(t))
			}
			base := testproc.FreePortRange(t, 10)
			switch {
			case tt.taken >= 100: // every port of the layout answers 200, as a running dev does
				for off := range 10 {
					l, err := net.Listen("tcp", testproc.Addr(base+off))
					if err != nil {
						t.Fatal(err)
					}
					srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"status":"UP"}`)) })}
					go srv.Serve(l)
					defer srv.Close()
				}
			case tt.taken >= 0:
				l, err := net.Listen("tcp", testproc.Addr(base+tt.taken))
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
			}
			dev := testproc.Start(t, bin, "dev", append(args, "--base-port", itoa(base))...)
			err, exited := dev.Wait(60 * time.Second)
			if !exited {
				t.Fatalf("portico dev still runs after a child failed to start; output:\n%s", dev.Output())
			}
			if err == nil {
				t.Errorf("portico dev exited 0, want non-zero")
			}
			var last string
			for line := range strings.Lines(dev.Output()) {
				if strings.HasPrefix(line, "portico dev: ") {
					last = line
				}
			}
			if strings.Contains(dev.Output(), `"msg":"ready"`) {
				t.Errorf("portico dev announced ready although its own processes never served; output:\n%s", dev.Output())
			}
			for _, w := range tt.want(base) {
				if !strings.Contains(last, w) {
					t.Errorf("error line %q, want it to say %q", last, w)
				}
			}
		})
	}
}

// missingDatabaseURL is DATABASE_URL naming a database that does not
// exist; it skips t when DATABASE_URL is unset.
func missingDatabaseURL(t *testing.T) string {
	admin := os.Getenv(pgtest.Env)
	if admin == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL case", pgtest.Env)
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	u.Path = "/portico_missing_" + hex.EncodeToString(b[:])
	return u.String()
}

// TestDevTextLog runs `portico dev --log-format text`: every record of the
// four processes and the supervisor reads as one human line, one "ready"
// line names the URLs once every process serves, and the request it
// suggests can be pasted as it is (the redactor used to cut its token and
// closing quote).
func TestDevTextLog(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	base := testproc.FreePortRange(t, 10)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", testproc.TempDir(t), "--log-format", "text")
	tryLine := regexp.MustCompile(`(?m)^try: curl -H '([^']+)' (http://\S+)$`)
	if !dev.WaitOutput(t.Context(), testproc.ReadyTimeout, tryLine.MatchString) {
		t.Fatalf("no pasteable try line; output:\n%s", dev.Output())
	}
	out := dev.Output()
	ready := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3} INFO  dev +ready edges=http://` + regexp.QuoteMeta(testproc.Addr(base)) + ` health=\S+/health openapi=\S+/openapi.json docs=\S+/docs console=http://` + regexp.QuoteMeta(testproc.Addr(base+4)) + `/$`)
	if n := len(ready.FindAllString(out, -1)); n != 1 {
		t.Errorf("%d ready lines, want 1", n)
	}
	record := regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} (DEBUG|INFO|WARN|ERROR) +(dev|inventory|payment|order|gateway) `)
	for line := range strings.Lines(out) {
		if !record.MatchString(line) && !tryLine.MatchString(strings.TrimSuffix(line, "\n")) {
			t.Errorf("line %q is neither a text record nor the try line", line)
		}
	}
	m := tryLine.FindStringSubmatch(out)
	name, value, _ := strings.Cut(m[1], ": ")
	r := call(t, "GET", m[2], "", "", name+": "+value)
	if r.status != 200 {
		t.Errorf("the try line's request = %d %s, want 200", r.status, r.body)
	}
}
