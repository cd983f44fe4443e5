package bench

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"

	"connectrpc.com/vanguard"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// serveVanguard is `benchedge vanguard`: vanguard-go's transcoder (REST
// to gRPC, from the same google.api.http rules) in front of the backend,
// reached through a reverse proxy over cleartext HTTP/2.
func serveVanguard(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("vanguard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "HTTP listen `ADDR`")
	backend := fs.String("backend", "", "the InventoryService's host:port")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *backend == "" {
		return errors.New("vanguard: want -backend")
	}
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: *backend})
	proxy.Transport = &http.Transport{Protocols: &protos}
	svc := vanguard.NewService("/"+inventoryv1.InventoryService_ServiceDesc.ServiceName+"/", proxy,
		vanguard.WithTargetProtocols(vanguard.ProtocolGRPC), vanguard.WithTargetCodecs(vanguard.CodecProto))
	t, err := vanguard.NewTranscoder([]*vanguard.Service{svc})
	if err != nil {
		return err
	}
	return serveHTTPUntil(ctx, *listen, t)
}
