package balance

import (
	"encoding/json"
	"fmt"

	"google.golang.org/grpc/balancer/leastrequest"
	"google.golang.org/grpc/balancer/roundrobin"
	_ "google.golang.org/grpc/health" // registers client-side health checking
)

// Load balancing policies, by their grpc-go names.
const (
	RoundRobin   = roundrobin.Name
	LeastRequest = leastrequest.Name
)

// Policy returns the grpc-go policy name for a configured one: "" and
// "round_robin" mean RoundRobin, "least_request" and
// "least_request_experimental" mean LeastRequest.
func Policy(name string) (string, error) {
	switch name {
	case "", RoundRobin:
		return RoundRobin, nil
	case "least_request", LeastRequest:
		return LeastRequest, nil
	}
	return "", fmt.Errorf("balance: unknown policy %q (want round_robin or least_request)", name)
}

// ServiceConfig returns the service config JSON for policy (see Policy) and,
// when healthCheck is true, client health checking of healthService ("" is
// the whole server).
func ServiceConfig(policy string, healthCheck bool, healthService string) (string, error) {
	p, err := Policy(policy)
	if err != nil {
		return "", err
	}
	lb := map[string]any{}
	if p == LeastRequest {
		lb["choiceCount"] = 2
	}
	sc := map[string]any{"loadBalancingConfig": []map[string]any{{p: lb}}}
	if healthCheck {
		sc["healthCheckConfig"] = map[string]string{"serviceName": healthService}
	}
	b, err := json.Marshal(sc)
	return string(b), err
}
