package logging

import (
	"context"
	"log/slog"

	mwlog "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc"
)

// renames maps go-grpc-middleware's field names to Portico's.
var renames = map[string]string{
	"grpc.method":  "method",
	"grpc.code":    "code",
	"grpc.time_ms": "durationMs",
	"grpc.service": "grpcService",
}

// UnaryServerInterceptor logs one access line per finished call through
// go-grpc-middleware's logging interceptor, with Portico's field names. The
// request and response payloads are never logged.
func UnaryServerInterceptor(l *slog.Logger) grpc.UnaryServerInterceptor {
	return mwlog.UnaryServerInterceptor(adapter(l),
		mwlog.WithLogOnEvents(mwlog.FinishCall),
		mwlog.WithDisableLoggingFields("protocol", "grpc.component", "grpc.method_type", "grpc.start_time", "peer.address"),
	)
}

func adapter(l *slog.Logger) mwlog.Logger {
	return mwlog.LoggerFunc(func(ctx context.Context, lvl mwlog.Level, msg string, fields ...any) {
		attrs := make([]any, 0, len(fields))
		for i := 0; i+1 < len(fields); i += 2 {
			k, _ := fields[i].(string)
			if n, ok := renames[k]; ok {
				k = n
			}
			attrs = append(attrs, k, fields[i+1])
		}
		l.Log(ctx, slog.Level(lvl), msg, attrs...)
	})
}
