package problem

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

var update = flag.Bool("update", false, "rewrite the generated reasons table of docs/errors.md")

const (
	errorsPage    = "../../docs/errors.md"
	reasonProto   = "../../proto/portico/type/v1/reason.proto"
	reasonsBegin  = "<!-- reasons:begin"
	reasonsEnd    = "<!-- reasons:end -->"
	errorTableTop = "| gRPC status (upstream or local)"
)

// reasonComments reads each Reason value's leading comment from the proto.
func reasonComments(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(reasonProto)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	var doc []string
	value := regexp.MustCompile(`^\s*(REASON_[A-Z0-9_]+)\s*=`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch m := value.FindStringSubmatch(line); {
		case strings.HasPrefix(line, "//"):
			doc = append(doc, strings.TrimSpace(strings.TrimPrefix(line, "//")))
		case m != nil:
			out[m[1]] = strings.Join(doc, " ")
			doc = nil
		default:
			doc = nil
		}
	}
	return out
}

// reasonsTable renders docs/errors.md's table of reasons from the enum:
// the values a service sends, those with a grpc_code.
func reasonsTable(t *testing.T) string {
	docs := reasonComments(t)
	var b strings.Builder
	b.WriteString("| reason | gRPC code | HTTP | sent by: when |\n|---|---|---|---|\n")
	values := typev1.Reason(0).Descriptor().Values()
	for i := 1; i < values.Len(); i++ {
		r := typev1.Reason(values.Get(i).Number())
		c := rpcerr.ReasonCode(r)
		if c == codes.Unknown {
			continue
		}
		name := rpcerr.ReasonName(r)
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", name, rpcerr.CodeName(c), catalogue[name].status(), docs[r.String()])
	}
	return b.String()
}

// TestDocReasons: docs/errors.md's table of reasons is the one generated
// from portico.type.v1.Reason; -update rewrites it.
func TestDocReasons(t *testing.T) {
	b, err := os.ReadFile(errorsPage)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	i := strings.Index(page, reasonsBegin)
	j := strings.Index(page, reasonsEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/errors.md lacks the %s ... %s block", reasonsBegin, reasonsEnd)
	}
	i += strings.Index(page[i:], "\n") + 1
	want := reasonsTable(t)
	if page[i:j] == want {
		return
	}
	if *update {
		if err := os.WriteFile(errorsPage, []byte(page[:i]+want+page[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/errors.md's reasons table is stale: run go test ./gateway/problem -run TestDocReasons -update\nwant:\n%s", want)
}

// TestDocErrorTable: every code docs/errors.md's error table names exists,
// in the edge's catalogue or as a reason, with the status the row gives it,
// and every condition names a gRPC code, a catalogue code or a reason.
func TestDocErrorTable(t *testing.T) {
	b, err := os.ReadFile(errorsPage)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	i := strings.Index(page, errorTableTop)
	if i < 0 {
		t.Fatalf("docs/errors.md lacks the error table (%q)", errorTableTop)
	}
	word := regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z]{4,}\b`)
	rows := 0
	for _, line := range strings.Split(page[i:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cols := strings.Split(strings.Trim(line, "|"), "|")
		if len(cols) != 3 {
			t.Errorf("row %q: %d columns, want 3", line, len(cols))
			continue
		}
		rows++
		httpStatus, err := strconv.Atoi(strings.TrimSpace(cols[1]))
		if err != nil {
			t.Errorf("row %q: status %q", line, cols[1])
			continue
		}
		for _, w := range word.FindAllString(cols[0], -1) {
			if _, ok := rpcerr.CodeByName(w); !ok && !known(w) {
				t.Errorf("row %q: condition names %s, neither a gRPC code, a catalogue code nor a reason", line, w)
			}
		}
		for _, w := range word.FindAllString(cols[2], -1) {
			if s, ok := codeStatus(w); !ok {
				t.Errorf("row %q: code %s is neither in the catalogue nor a reason", line, w)
			} else if s != httpStatus {
				t.Errorf("row %q: code %s is answered %d, the row says %d", line, w, s, httpStatus)
			}
		}
	}
	if rows < 10 {
		t.Errorf("read %d rows of the error table, want the whole table", rows)
	}
}

func known(w string) bool { _, ok := codeStatus(w); return ok }

// codeStatus is the HTTP status of a problem code.
func codeStatus(w string) (int, bool) {
	e, ok := catalogue[w]
	return e.status(), ok
}

// TestReasonRoles: the options of every portico.type.v1.Reason value say
// what it is, consistently: a reason a service sends (grpc_code) and an
// edge's own code (title) are problem codes (doc), and a problem code has
// a status, from http_status or from its grpc_code's row of the table.
func TestReasonRoles(t *testing.T) {
	values := typev1.Reason(0).Descriptor().Values()
	for i := 1; i < values.Len(); i++ {
		r := typev1.Reason(values.Get(i).Number())
		sent, edge := rpcerr.ReasonCode(r) != codes.Unknown, rpcerr.ReasonTitle(r) != ""
		doc, status := rpcerr.ReasonDoc(r) != "", rpcerr.ReasonHTTPStatus(r) != 0
		switch {
		case (sent || edge) && !doc:
			t.Errorf("%v: sent %v, edge code %v, but no doc: every such value is a problem code", r, sent, edge)
		case doc && !sent && !status:
			t.Errorf("%v: a problem code without grpc_code needs an http_status", r)
		case doc && !sent && !edge:
			t.Errorf("%v: a problem code no service sends is the edge's own: it needs a title", r)
		case !doc && status:
			t.Errorf("%v: http_status on a value that is no problem code", r)
		}
	}
}
