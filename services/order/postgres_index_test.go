package order

import (
	"strings"
	"testing"

	"github.com/portico-gateway/portico/internal/pgtest"
)

// TestPartialIndexesServeTheirQueries: the reconciler's scans of PENDING
// and ACCEPTED orders use their partial indexes, even as the generic plan
// of a prepared statement (pgx prepares every statement), which can only
// use a partial index whose predicate the query's own text implies.
// orders_pending once filtered on 'PENDING', a status never stored.
func TestPartialIndexesServeTheirQueries(t *testing.T) {
	store, err := OpenPostgres(t.Context(), pgtest.New(t), Lease{Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	conn, err := store.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, set := range []string{`SET plan_cache_mode = force_generic_plan`, `SET enable_seqscan = off`} {
		if _, err := conn.Exec(t.Context(), set); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ index, query, args string }{
		{"orders_pending", pendingQuery, "(0, 'test', 10)"},
		{"orders_accepted", acceptedQuery, "('test', 10)"},
	} {
		name := "plan_" + tc.index
		if _, err := conn.Exec(t.Context(), `PREPARE `+name+` AS `+tc.query); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(t.Context(), `EXPLAIN EXECUTE `+name+tc.args)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			_ = rows.Scan(&line)
			plan = append(plan, line)
		}
		rows.Close()
		if !strings.Contains(strings.Join(plan, "\n"), "Index Scan using "+tc.index+" ") {
			t.Errorf("generic plan of %s does not use %s:\n%s", tc.index, tc.index, strings.Join(plan, "\n"))
		}
	}
}
