package cpushare

import (
	"runtime"
	"strconv"
	"testing"
)

func TestShare(t *testing.T) {
	for _, c := range []struct{ cpus, procs, want int }{
		{2, 1, 2}, {2, 3, 1}, {2, 8, 1}, {8, 4, 2}, {16, 8, 2}, {16, 5, 3}, {4, 0, 4}, {4, -1, 4}, {1, 1, 1},
	} {
		if got := Share(c.cpus, c.procs); got != c.want {
			t.Errorf("Share(%d, %d) = %d, want %d", c.cpus, c.procs, got, c.want)
		}
	}
}

func TestVar(t *testing.T) {
	want := Key + "=" + strconv.Itoa(Share(runtime.GOMAXPROCS(0), 4))
	if kv, ok := Var([]string{"PATH=/bin", "GOMAXPROCSX=9"}, 4); !ok || kv != want {
		t.Errorf("Var = %q, %v; want %q, true", kv, ok, want)
	}
	if kv, ok := Var([]string{"GOMAXPROCS=3"}, 4); ok {
		t.Errorf("Var with GOMAXPROCS set = %q, true; want the person's choice kept", kv)
	}
	for _, ignored := range []string{"GOMAXPROCS=", "GOMAXPROCS=0", "GOMAXPROCS=-2", "GOMAXPROCS=two"} {
		if kv, ok := Var([]string{ignored}, 4); !ok || kv != want {
			t.Errorf("Var with %s (ignored by the runtime) = %q, %v; want %q, true", ignored, kv, ok, want)
		}
	}
}
