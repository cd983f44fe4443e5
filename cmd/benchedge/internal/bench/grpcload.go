package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// runGRPCLoad is `benchedge grpcload`: the generator of `load` calling
// GetItem over gRPC (one HTTP/2 connection per generator connection); an
// OK call counts as 200, any error as 0.
func runGRPCLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f loadFlags
	fs := flag.NewFlagSet("grpcload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "the InventoryService's host:port")
	fs.IntVar(&f.conns, "conns", 64, "concurrent callers")
	fs.IntVar(&f.rate, "rate", 0, "calls a second, open loop; 0 is closed loop")
	fs.DurationVar(&f.dur, "duration", 10*time.Second, "how long load is offered")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" || f.conns < 1 {
		return errors.New("grpcload: want -addr and -conns >= 1")
	}
	res := generate(ctx, f, func() doer { return &grpcCaller{addr: *addr} })
	return json.NewEncoder(stdout).Encode(res)
}

type grpcCaller struct {
	addr string
	cc   *grpc.ClientConn
	c    inventoryv1.InventoryServiceClient
}

func (g *grpcCaller) do(ctx context.Context) (int, error) {
	if g.cc == nil {
		cc, err := grpc.NewClient(g.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return 0, err
		}
		g.cc, g.c = cc, inventoryv1.NewInventoryServiceClient(cc)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := g.c.GetItem(ctx, &inventoryv1.GetItemRequest{Sku: benchSKU}); err != nil {
		return 0, err
	}
	return 200, nil
}

func (g *grpcCaller) close() {
	if g.cc != nil {
		g.cc.Close()
	}
}
