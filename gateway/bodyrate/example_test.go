package bodyrate_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/portico-gateway/portico/gateway/bodyrate"
)

func Example() {
	rule := bodyrate.Rule{Timeout: 10 * time.Second, MinRate: 1024, Grace: time.Second}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fmt.Println("deadline with nothing read:", rule.Deadline(start, 0).Sub(start))
	fmt.Println("deadline after 4 KiB:", rule.Deadline(start, 4096).Sub(start))

	// At the edge, setDeadline is http.NewResponseController(w).SetReadDeadline.
	noDeadline := func(time.Time) error { return nil }
	data, whole, err := bodyrate.Read(strings.NewReader(`{"sku":"kb-1"}`), 1<<20, rule, noDeadline)
	fmt.Println(string(data), whole, err)
	// Output:
	// deadline with nothing read: 1s
	// deadline after 4 KiB: 5s
	// {"sku":"kb-1"} true <nil>
}
