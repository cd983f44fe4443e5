package logging

import (
	"fmt"
	"log/slog"
	"os"

	"google.golang.org/grpc/grpclog"
)

// GRPCLogger adapts l for grpclog.SetLoggerV2, so what grpc-go and
// grpc-gateway log themselves comes out as JSON records of the process's
// stream instead of plain-text lines. Their INFO and WARNING are chatty
// (grpc-go's own default prints neither) and become DEBUG; ERROR stays
// ERROR; FATAL logs ERROR and exits 1, as grpclog requires.
func GRPCLogger(l *slog.Logger) grpclog.LoggerV2 {
	l = l.With("component", "grpc")
	return GRPCLoggerFunc(func() *slog.Logger { return l })
}

// GRPCLoggerFunc is GRPCLogger writing to whatever logger current returns
// at each call: grpclog's logger is a process-wide variable that must be
// set once, before anything dials or serves, and never again while gRPC
// goroutines may read it (a data race), so a process that changes loggers
// (tests running several subcommands) sets this once and swaps what
// current returns. current's logger should carry component=grpc.
func GRPCLoggerFunc(current func() *slog.Logger) grpclog.LoggerV2 { return grpcLogger{current} }

type grpcLogger struct{ cur func() *slog.Logger }

func (g grpcLogger) l() *slog.Logger { return g.cur() }

var _ grpclog.LoggerV2 = grpcLogger{}

func (g grpcLogger) Info(args ...any)                 { g.l().Debug(fmt.Sprint(args...)) }
func (g grpcLogger) Infoln(args ...any)               { g.l().Debug(fmt.Sprint(args...)) }
func (g grpcLogger) Infof(format string, args ...any) { g.l().Debug(fmt.Sprintf(format, args...)) }
func (g grpcLogger) Warning(args ...any)              { g.l().Debug(fmt.Sprint(args...)) }
func (g grpcLogger) Warningln(args ...any)            { g.l().Debug(fmt.Sprint(args...)) }
func (g grpcLogger) Warningf(format string, args ...any) {
	g.l().Debug(fmt.Sprintf(format, args...))
}
func (g grpcLogger) Error(args ...any)                 { g.l().Error(fmt.Sprint(args...)) }
func (g grpcLogger) Errorln(args ...any)               { g.l().Error(fmt.Sprint(args...)) }
func (g grpcLogger) Errorf(format string, args ...any) { g.l().Error(fmt.Sprintf(format, args...)) }
func (g grpcLogger) Fatal(args ...any)                 { g.Error(args...); os.Exit(1) }
func (g grpcLogger) Fatalln(args ...any)               { g.Error(args...); os.Exit(1) }
func (g grpcLogger) Fatalf(format string, args ...any) { g.Errorf(format, args...); os.Exit(1) }

// V reports whether verbose logging at level v is on: only level 0, as in
// grpc-go's default.
func (g grpcLogger) V(v int) bool { return v <= 0 }
