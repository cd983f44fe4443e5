package faults

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Rule is one fault: for Rate of the calls to Method, wait Delay, then fail
// with Code (codes.OK: don't fail).
type Rule struct {
	Method string
	Delay  time.Duration
	Code   codes.Code
	Rate   float64
}

// Rules is a list of rules; it implements flag.Value, so a repeated --faults
// flag adds rules.
type Rules []Rule

// Parse parses rules in the flag syntax of the package documentation. An
// empty string means no rules.
func Parse(s string) (Rules, error) {
	var rs Rules
	for part := range strings.SplitSeq(s, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		r, err := parseRule(part)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

func parseRule(s string) (Rule, error) {
	r := Rule{Method: "*", Rate: 1}
	seen := map[string]bool{}
	for kv := range strings.SplitSeq(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || key == "" {
			return Rule{}, fmt.Errorf("faults: %q: want key=value", kv)
		}
		if seen[key] {
			return Rule{}, fmt.Errorf("faults: %s given twice", key)
		}
		seen[key] = true
		if err := r.set(key, val); err != nil {
			return Rule{}, err
		}
	}
	if r.Delay == 0 && r.Code == codes.OK {
		return Rule{}, fmt.Errorf("faults: %q: give delay or code", strings.TrimSpace(s))
	}
	return r, nil
}

func (r *Rule) set(key, val string) error {
	switch key {
	case "method":
		if val != "*" && (!strings.HasPrefix(val, "/") || strings.Count(val, "/") != 2) {
			return fmt.Errorf("faults: method %q: want \"*\" or /package.Service/Method", val)
		}
		r.Method = val
	case "delay":
		d, err := time.ParseDuration(val)
		if err != nil || d < 0 {
			return fmt.Errorf("faults: delay %q: want a non-negative duration such as 350ms", val)
		}
		r.Delay = d
	case "code":
		c, ok := codeByName(val)
		if !ok || c == codes.OK {
			return fmt.Errorf("faults: code %q: want a gRPC code name other than OK, such as UNAVAILABLE", val)
		}
		r.Code = c
	case "rate":
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("faults: rate %q: want a number from 0 to 1", val)
		}
		r.Rate = f
	default:
		return fmt.Errorf("faults: unknown key %q (want method, delay, code or rate)", key)
	}
	return nil
}

// String formats r in the flag syntax; Parse(r.String()) returns r.
func (r Rule) String() string {
	parts := []string{"method=" + r.Method}
	if r.Delay != 0 {
		parts = append(parts, "delay="+r.Delay.String())
	}
	if r.Code != codes.OK {
		parts = append(parts, "code="+codeName(r.Code))
	}
	parts = append(parts, "rate="+strconv.FormatFloat(r.Rate, 'g', -1, 64))
	return strings.Join(parts, ",")
}

// codeName is the code's canonical name (rpcerr.CodeName).
func codeName(c codes.Code) string { return rpcerr.CodeName(c) }

// codeByName accepts a canonical name in any case (rpcerr.CodeByName).
func codeByName(name string) (codes.Code, bool) { return rpcerr.CodeByName(name) }

// String formats the rules in the flag syntax.
func (rs Rules) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ";")
}

// Set parses s and appends its rules (flag.Value).
func (rs *Rules) Set(s string) error {
	more, err := Parse(s)
	if err != nil {
		return err
	}
	*rs = append(*rs, more...)
	return nil
}
