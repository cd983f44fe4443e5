// Package reason is the error vocabulary of the interceptors: the
// google.rpc.ErrorInfo domain and reasons they put on the errors they make,
// so the edge and the other interceptors branch on a reason, never on a
// message. The reasons are values of portico.type.v1.Reason, the one list
// of Portico's reasons and problem codes.
//
// A reason says who decided the outcome. The local fast-fails
// (DEADLINE_BUDGET_EXHAUSTED, CIRCUIT_OPEN, OVERLOADED) are made up by the
// caller's own interceptors without a byte reaching the upstream; retrying
// them only repeats the refusal, so package retry never does. UPSTREAM_TIMEOUT
// marks a deadline that fired while the upstream named in "hop" still had the
// call. The edge maps them: UPSTREAM_TIMEOUT to 504, CIRCUIT_OPEN and
// OVERLOADED to 503 with Retry-After from retryAfterMs.
package reason
