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
		fmt.Fprintln(stderr, "usage: benchedge edge|overload|slowbody|load|grpcload|backend|floor|stock|vanguard|assembled [flags]")
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
	case "edge":
		var f compareFlags
		if f, err = parseCompare(args[1:], stderr); err == nil {
			err = compare(ctx, f, stdout, stderr)
		}
	case "slowbody":
		var f slowBodyFlags
		if f, err = parseSlowBody(args[1:], stderr); err == nil {
			err = runSlowBody(ctx, f, stdout)
		}
	case "grpcload":
		err = runGRPCLoad(ctx, args[1:], stdout, stderr)
	case "stock":
		err = serveStock(ctx, args[1:], stderr)
	case "vanguard":
		err = serveVanguard(ctx, args[1:], stderr)
	case "assembled":
		err = serveAssembled(ctx, args[1:], stderr)
	case "backend":
		err = serveBackend(ctx, args[1:], stderr)
	case "floor":
		err = serveFloor(ctx, args[1:], stderr)
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
