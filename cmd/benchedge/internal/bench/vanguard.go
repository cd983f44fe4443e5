package bench

import (
	"context"
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
	listen, backend, err := parseFront("vanguard", args, stderr)
	if err != nil {
		return err
	}
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: backend})
	proxy.Transport = &http.Transport{Protocols: &protos}
	svc := vanguard.NewService("/"+inventoryv1.InventoryService_ServiceDesc.ServiceName+"/", proxy,
		vanguard.WithTargetProtocols(vanguard.ProtocolGRPC), vanguard.WithTargetCodecs(vanguard.CodecProto))
	t, err := vanguard.NewTranscoder([]*vanguard.Service{svc})
	if err != nil {
		return err
	}
	return serveHTTPUntil(ctx, listen, t)
}
