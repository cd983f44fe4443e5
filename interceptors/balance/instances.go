package balance

import "time"

// Instance is one address of a Resolver and its ejection state.
type Instance struct {
	Addr string `json:"addr"`
	// Ejected is true while the address is out of the list; Until is when
	// it returns.
	Ejected bool      `json:"ejected"`
	Until   time.Time `json:"ejectedUntil,omitzero"`
	// ConsecutiveFailures counts failures since its last success.
	ConsecutiveFailures int `json:"consecutiveFailures"`
	// Ejections counts how often it was ejected lately (it sets the next
	// ejection's length).
	Ejections int `json:"ejections"`
}

// Instances returns every configured address with its ejection state, in
// list order.
func (r *Resolver) Instances() []Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Instance, 0, len(r.addrs))
	for _, a := range r.addrs {
		h := r.hosts[a]
		out = append(out, Instance{Addr: a, Ejected: !h.ejectedUntil.IsZero(), Until: h.ejectedUntil,
			ConsecutiveFailures: h.failures, Ejections: h.ejections})
	}
	return out
}
