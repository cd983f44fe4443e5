package logging

import (
	"context"
	"log/slog"

	mwlog "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc"
)

// renames maps go-grpc-middleware's field names to Portico's access-log
// names, shared with the edge (method, code, durationMs).
var renames = map[string]string{
	"grpc.method":  "method",
	"grpc.code":    "code",
	"grpc.time_ms": "durationMs",
}

// dropped are go-grpc-middleware fields Portico's access line leaves out:
// the peer address is internal topology, and the rest repeat time or path.
var dropped = map[string]bool{
	"protocol": true, "grpc.component": true, "grpc.method_type": true,
	"grpc.start_time": true, "grpc.request.deadline": true, "peer.address": true,
	"grpc.service": true,
}

// UnaryServerInterceptor logs one access line ("request") per finished call
// through go-grpc-middleware's logging interceptor, with Portico's field
// names: method (e.g. "ReserveStock"), path (the full gRPC method), code,
// durationMs, and traceId from the context. Payloads are never logged.
func UnaryServerInterceptor(l *slog.Logger) grpc.UnaryServerInterceptor {
	return mwlog.UnaryServerInterceptor(adapter(l), mwlog.WithLogOnEvents(mwlog.FinishCall))
}

func adapter(l *slog.Logger) mwlog.Logger {
	return mwlog.LoggerFunc(func(ctx context.Context, lvl mwlog.Level, msg string, fields ...any) {
		attrs := make([]any, 0, len(fields)+2)
		var service, method string
		for i := 0; i+1 < len(fields); i += 2 {
			k, _ := fields[i].(string)
			switch k {
			case "grpc.service":
				service, _ = fields[i+1].(string)
			case "grpc.method":
				method, _ = fields[i+1].(string)
			}
			if dropped[k] {
				continue
			}
			if n, ok := renames[k]; ok {
				k = n
			}
			attrs = append(attrs, k, fields[i+1])
		}
		if service != "" {
			attrs = append(attrs, "path", "/"+service+"/"+method)
		}
		if msg == "finished call" {
			msg = "request"
		}
		l.Log(ctx, slog.Level(lvl), msg, attrs...)
	})
}
