package rpcerr

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestNew(t *testing.T) {
	err := New(codes.FailedPrecondition, "inventory.portico.dev", "INSUFFICIENT_STOCK", "not enough", "sku", "keyboard-001", "odd")
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("code = %v", status.Code(err))
	}
	info := ErrorInfo(err)
	if info.GetDomain() != "inventory.portico.dev" || info.GetReason() != "INSUFFICIENT_STOCK" {
		t.Errorf("ErrorInfo = %v", info)
	}
	if got := info.GetMetadata(); len(got) != 1 || got["sku"] != "keyboard-001" {
		t.Errorf("metadata = %v, want only sku (the odd key is dropped)", got)
	}
	if Reason(fmt.Errorf("wrapped: %w", err)) != "INSUFFICIENT_STOCK" {
		t.Error("Reason does not see through wrapping")
	}
}

func TestReasonOfPlainErrors(t *testing.T) {
	for name, err := range map[string]error{
		"nil":            nil,
		"plain":          fmt.Errorf("boom"),
		"status no info": status.Error(codes.Internal, "x"),
	} {
		if got := Reason(err); got != "" {
			t.Errorf("%s: Reason = %q, want empty", name, got)
		}
	}
}

func TestViolations(t *testing.T) {
	var v Violations
	if v.Err() != nil {
		t.Fatal("empty Violations must be nil")
	}
	v.Add("lines[0].quantity", "must be 1-1000")
	v.Add("payment_method", "required")
	err := v.Err()
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("code = %v", st.Code())
	}
	var br *errdetails.BadRequest
	for _, d := range st.Details() {
		if b, ok := d.(*errdetails.BadRequest); ok {
			br = b
		}
	}
	if br == nil || len(br.GetFieldViolations()) != 2 || br.GetFieldViolations()[1].GetField() != "payment_method" {
		t.Errorf("BadRequest = %v, want both fields", br)
	}
}

func TestWithRetryInfo(t *testing.T) {
	err := WithRetryInfo(New(codes.Unavailable, "d", "R", "down"), 1500*time.Millisecond)
	var ri *errdetails.RetryInfo
	for _, d := range status.Convert(err).Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			ri = r
		}
	}
	if ri.GetRetryDelay().AsDuration() != 1500*time.Millisecond {
		t.Errorf("RetryInfo = %v", ri)
	}
	if Reason(err) != "R" {
		t.Error("RetryInfo dropped the ErrorInfo")
	}
}

func TestCodeNames(t *testing.T) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		name := CodeName(c)
		if got, ok := CodeByName(strings.ToLower(name)); !ok || got != c {
			t.Errorf("CodeByName(%q) = %v, %v; want %v", name, got, ok, c)
		}
	}
	if CodeName(codes.FailedPrecondition) != "FAILED_PRECONDITION" || CodeName(99) != "CODE_99" {
		t.Error("CodeName is not the canonical UPPER_SNAKE form")
	}
	if _, ok := CodeByName("NotFound"); ok {
		t.Error("CodeByName accepted Go's CamelCase")
	}
}

func TestViolationsHas(t *testing.T) {
	var v Violations
	v.Add("update_mask", "too many paths")
	if !v.Has("update_mask") || v.Has("update_mask.paths[0]") || v.Has("") {
		t.Errorf("Has on %v: want only update_mask", v)
	}
}
