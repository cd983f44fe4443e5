package browsertest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testPage = `<!doctype html><html><head><script src="/app.js" defer></script></head>
<body><h1>Hello</h1><input id="in"><button id="go">go</button><p id="out"></p></body></html>`

const testScript = `document.getElementById("go").addEventListener("click", () => {
  document.getElementById("out").textContent = "echo " + document.getElementById("in").value;
});`

func testServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(testPage))
	})
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write([]byte(testScript))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestRun drives a real Chromium through a scenario: it loads a page, asks
// the test for a word mid-scenario, types it, and returns what it saw;
// the requests, screenshots and return value come back.
func TestRun(t *testing.T) {
	b := Find(t)
	srv := testServer(t)
	var asked json.RawMessage
	res := b.Run(t, "testdata/page.mjs", Options{
		URL:    srv.URL + "/",
		Params: map[string]bool{"fail": false},
		Ask: func(name string, data json.RawMessage) (any, error) {
			asked = data
			return "portico", nil
		},
	})
	var got struct{ Heading, Out string }
	if err := json.Unmarshal(res.Data, &got); err != nil {
		t.Fatalf("data %s: %v", res.Data, err)
	}
	if got.Heading != "Hello" || got.Out != "echo portico" {
		t.Errorf("data = %+v, want heading Hello and out %q", got, "echo portico")
	}
	if !strings.Contains(string(asked), `"heading":"Hello"`) {
		t.Errorf("ask data = %s, want the heading", asked)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if hosts := res.Hosts(); len(hosts) != 1 || hosts[0] != host {
		t.Errorf("hosts = %v, want only %s", hosts, host)
	}
	if res.TransferredBytes() < int64(len(testPage)+len(testScript)) {
		t.Errorf("transferred %d bytes, want at least the page and its script (%d)", res.TransferredBytes(), len(testPage)+len(testScript))
	}
	if len(res.Screenshots) != 2 {
		t.Fatalf("screenshots = %v, want loaded and typed", res.Screenshots)
	}
	for _, f := range res.Screenshots {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("screenshot %s: %v", f, err)
		}
	}
}

// TestRunFails: a scenario that throws, or whose ask the test refuses,
// returns the error with a failure screenshot, never a result.
func TestRunFails(t *testing.T) {
	b := Find(t)
	srv := testServer(t)
	tests := []struct {
		name string
		fail bool
		ask  func(string, json.RawMessage) (any, error)
		want string
	}{
		{"throws", true, func(string, json.RawMessage) (any, error) { return "x", nil }, "asked to fail"},
		{"no ask", false, nil, "no Options.Ask"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := b.run(t, "testdata/page.mjs", Options{URL: srv.URL + "/", Params: map[string]bool{"fail": tt.fail}, Ask: tt.ask})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if n := len(res.Screenshots); n == 0 || !strings.HasSuffix(res.Screenshots[n-1], "-failure.png") {
				t.Errorf("screenshots = %v, want a failure screenshot last", res.Screenshots)
			}
		})
	}
}
