package gateway

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestAdminAuditBy: a rollback through the admin API is audited with the
// caller's subject (/admin/audit and the "config audit" line); a change
// made without an admin request has none.
func TestAdminAuditBy(t *testing.T) {
	h, admin := consoleHarness(t)
	next := h.cfg
	next.Routes.MaxBodyBytes = 2048
	if _, err := h.srv.Reload(t.Context(), next, SourceSignal); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, admin.URL+"/admin/rollback", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := admin.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /admin/rollback = %v %v", resp, err)
	}
	resp.Body.Close()
	_, body := consoleGet(t, admin, "/admin/audit", adminToken)
	var audit struct{ Audit []AuditEntry }
	if err := json.Unmarshal([]byte(body), &audit); err != nil || len(audit.Audit) != 2 {
		t.Fatalf("/admin/audit = %s, want 2 records", body)
	}
	if got := audit.Audit[0]; got.Source != SourceRollback || got.By != "course-admin" {
		t.Errorf("rollback record = %+v, want by course-admin", got)
	}
	if got := audit.Audit[1]; got.Source != SourceSignal || got.By != "" || strings.Contains(body, `"by":""`) {
		t.Errorf("signal record = %+v, want no by", got)
	}
	lines := h.logs.lines(t, "config audit")
	if len(lines) != 2 || lines[1]["by"] != "course-admin" || lines[0]["by"] != "" {
		t.Errorf("config audit lines = %v, want the rollback's by course-admin", lines)
	}
}

// TestAdminAccessLines: every request under /admin/ gets one access line
// in the API's format, failed sign-ins included, never with the token;
// the open /metrics and console files get none.
func TestAdminAccessLines(t *testing.T) {
	h, admin := consoleHarness(t)
	calls := []struct {
		path, token   string
		status        float64
		subject, code string
	}{
		{"/admin/versions", "wrong-secret-token", 401, "", "UNAUTHENTICATED"},
		{"/admin/versions", readerToken, 403, "course-reader", "FORBIDDEN"},
		{"/admin/versions", adminToken, 200, "course-admin", ""},
		{"/admin/nope", adminToken, 404, "", "ROUTE_NOT_FOUND"},
	}
	for _, c := range calls {
		consoleGet(t, admin, c.path, c.token)
	}
	consoleGet(t, admin, "/metrics", "")
	consoleGet(t, admin, "/", "")
	admin.Close() // waits for the handlers, and so for their access lines
	lines := h.logs.lines(t, "request")
	if len(lines) != len(calls) {
		t.Fatalf("got %d access lines, want %d:\n%s", len(lines), len(calls), h.logs.String())
	}
	for i, c := range calls {
		l := lines[i]
		if l["path"] != c.path || l["status"] != c.status || l["subject"] != c.subject || l["code"] != c.code || l["method"] != "GET" {
			t.Errorf("access line %d = %v, want %s %v subject %q code %q", i, l, c.path, c.status, c.subject, c.code)
		}
	}
	for _, tok := range []string{"wrong-secret-token", readerToken, adminToken} {
		if strings.Contains(h.logs.String(), tok) {
			t.Errorf("the logs show token %s", tok)
		}
	}
}

// duplicateKeys returns the keys that a JSON object line repeats at its
// top level (json.Unmarshal keeps the last and says nothing).
func duplicateKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", line)
	}
	seen, dups := map[string]bool{}, []string(nil)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		k := tok.(string)
		if seen[k] {
			dups = append(dups, k)
		}
		seen[k] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
	}
	return dups
}

// TestAuditLineMatchesAdmin: each "config audit" line has unique keys (it
// had two "time"s), and /admin/audit carries every fact the line has,
// under the admin API's names ("err" is "error" there).
func TestAuditLineMatchesAdmin(t *testing.T) {
	h, admin := consoleHarness(t)
	next := h.cfg
	next.Routes.MaxBodyBytes = 2048
	if _, err := h.srv.Reload(t.Context(), next, SourceSignal); err != nil {
		t.Fatal(err)
	}
	next.Routes.MaxBodyBytes = -1
	if _, err := h.srv.Reload(t.Context(), next, SourceSignal); err == nil {
		t.Fatal("a negative max_body_bytes was applied")
	}
	var raw []string
	for _, l := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		if strings.Contains(l, `"msg":"config audit"`) {
			raw = append(raw, l)
		}
	}
	lines := h.logs.lines(t, "config audit")
	_, body := consoleGet(t, admin, "/admin/audit", adminToken)
	var audit struct{ Audit []map[string]any }
	if err := json.Unmarshal([]byte(body), &audit); err != nil || len(audit.Audit) != 2 || len(lines) != 2 || len(raw) != 2 {
		t.Fatalf("/admin/audit = %s (%v), log lines %v, want 2 of each", body, err, lines)
	}
	for i, line := range lines {
		if d := duplicateKeys(t, raw[i]); d != nil {
			t.Errorf("config audit line repeats %v: %s", d, raw[i])
		}
		entry := audit.Audit[len(lines)-1-i] // newest first
		for k, v := range line {
			switch k {
			case "time", "level", "msg", "service", "diff": // the record's own and the logger's; diff is bounded in the log
				continue
			case "err":
				k = "error"
			}
			if v == "" {
				continue // omitted when empty
			}
			if got, ok := entry[k]; !ok || got != v {
				t.Errorf("record %d: /admin/audit %s = %v, log line has %v", i, k, got, v)
			}
		}
	}
	if got := audit.Audit[1]["changed"]; got != float64(1) {
		t.Errorf("applied record changed = %v, want 1", got)
	}
}

// TestAdminOpenAPIAuditEntry: the fragment's AuditEntry names exactly the
// members an audit record's JSON has.
func TestAdminOpenAPIAuditEntry(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct{ Properties map[string]any }
		}
	}
	if err := json.Unmarshal(adminOpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range doc.Components.Schemas["AuditEntry"].Properties {
		got = append(got, k)
	}
	var want []string
	for f := range reflect.TypeFor[AuditEntry]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		want = append(want, name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("AuditEntry schema properties = %v, want %v", got, want)
	}
}
