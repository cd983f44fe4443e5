package logging

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"
)

// SetRedisLogger makes what go-redis logs itself (a pool that cannot
// dial, a connection it drops) JSON records of the process's stream, like
// GRPCLoggerFunc does for grpc-go: its default prints plain-text
// "redis: 2026/..." lines to stderr. Every line it prints reports trouble,
// so each becomes a WARN record with component=redis, its "redis: "
// prefix dropped. go-redis's logger is process-wide: current is read at
// each record, so a process that swaps loggers sets this once.
func SetRedisLogger(current func() *slog.Logger) { redis.SetLogger(redisLogger{current}) }

type redisLogger struct{ current func() *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")
	r.current().WarnContext(ctx, msg, "component", "redis")
}
