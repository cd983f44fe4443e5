package apidoc

import "net/http"

// Common are the statuses every /api operation can answer: 400 (a field
// rule, malformed JSON, a bad Grpc-Timeout), 401 and 403 (the edge's bearer
// policy), 429 (an upstream sheds load with RESOURCE_EXHAUSTED and a retry
// hint), 502, 503 and 504 (the resilience chain: unreachable, circuit open
// or overloaded, deadline).
var Common = []int{
	http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests,
	http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
}
