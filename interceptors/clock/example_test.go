package clock_test

import (
	"fmt"
	"time"

	"github.com/portico-gateway/portico/interceptors/clock"
)

func ExampleFake() {
	f := clock.NewFake(time.Date(2026, 8, 18, 3, 0, 0, 0, time.UTC))
	coolDown := f.NewTimer(800 * time.Millisecond)
	f.Advance(800 * time.Millisecond) // no sleeping
	fmt.Println((<-coolDown.C()).Format(time.TimeOnly + ".000"))
	// Output: 03:00:00.800
}
