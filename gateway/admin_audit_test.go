package gateway

import (
	"encoding/json"
	"net/http"
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
