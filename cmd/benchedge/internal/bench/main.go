package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
)

// Main runs benchedge with args and returns its exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: benchedge overload|load|backend [flags]")
		return 2
	}
	var err error
	switch args[0] {
	case "overload":
		var f overloadFlags
		if f, err = parseOverload(args[1:], stderr); err == nil {
			err = overload(ctx, f, stdout, stderr)
		}
	case "load":
		var f loadFlags
		if f, err = parseLoad(args[1:], stderr); err == nil {
			err = runLoad(ctx, f, stdout)
		}
	case "backend":
		err = serveBackend(ctx, args[1:], stderr)
	default:
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, "benchedge:", err)
		return 1
	}
	return 0
}

func numCPU() int { return runtime.NumCPU() }
