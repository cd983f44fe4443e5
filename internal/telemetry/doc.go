// Package telemetry sets up OpenTelemetry tracing for one Portico process:
// the tracer provider with the process's service.name (portico-gateway,
// portico-inventory, portico-payment or portico-order), the W3C Trace
// Context propagator (traceparent and tracestate), the sampler and the
// exporter, and its flush on shutdown.
//
// Export follows the standard OTEL_* variables first, then Config: with
// OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set, contrib autoexport builds the
// exporter (OTEL_EXPORTER_OTLP_PROTOCOL picks grpc or http/protobuf), else
// Config.Endpoint does, else nothing is exported; OTEL_SDK_DISABLED=true
// exports nothing whatever the rest says. Without an exporter no span
// is recorded: the tracer still mints W3C ids, so trace ids and traceparent
// work, at the cost of two random numbers per span; a gRPC call then gets
// no client span of its own, and the callee continues the caller's span
// (ClientHandler).
//
// Sampling is parent-based, as OpenTelemetry's default sampler, and by
// trace id otherwise, so every process decides alike for one trace:
//   - a span with a parent in this process follows the parent;
//   - a caller whose W3C traceparent says sampled is followed, at the edge
//     too, so a consumer debugging its own sampled trace gets the
//     gateway's part of it;
//   - a new trace is decided by Config.SampleRatio over the trace id;
//   - a caller whose flag says unsampled is followed by a service, and
//     decided by the ratio at the edge (Config.Edge), so a client that
//     samples nothing still has the edge's share of its requests traced;
//   - OTEL_TRACES_SAMPLER (and _ARG) replaces all of this when set
//     (traceidratio decides by the ratio alone, ignoring callers' flags).
//
// Errors are always recorded: a span the ratio did not pick is still
// recorded (RecordOnly) while an exporter is configured, and exported if it
// ends with status Error, so a failing request's spans reach the backend
// from every process that saw the failure.
//
// Shutdown flushes what is queued; call it once when the process stops.
// A Provider is safe for concurrent use.
package telemetry
