package order

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// settle stores rec's order with status st, as a saga step on some
// process does; notify says whether this process's watches are told.
func settle(t *testing.T, h *harness, id string, st orderv1.Order_Status, notify bool) {
	t.Helper()
	rec := h.get(id)
	from := rec.Order.GetStatus()
	rec.Order.Status = st
	rec.Order.UpdateTime = timestamppb.New(time.Now())
	if err := h.store.Update(context.Background(), rec, from); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if notify {
		h.svc.changes.notify(id)
	}
}

func TestWatchOrder(t *testing.T) {
	for _, tt := range []struct {
		name   string
		notify bool // false: the change is another replica's, seen by polling
	}{{"same process", true}, {"another replica", false}} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, WithWatchPoll(20*time.Millisecond))
			seed(t, h, "alice", 1)
			id := h.stored()[0].Order.GetId()
			stream, err := h.client.WatchOrder(alice(t, ""), &orderv1.WatchOrderRequest{Id: id})
			if err != nil {
				t.Fatalf("WatchOrder: %v", err)
			}
			first, err := stream.Recv()
			if err != nil || first.GetStatus() != orderv1.Order_STATUS_PENDING {
				t.Fatalf("first Recv() = %v, %v; want PENDING", first.GetStatus(), err)
			}
			settle(t, h, id, orderv1.Order_STATUS_CONFIRMED, tt.notify)
			next, err := stream.Recv()
			if err != nil || next.GetStatus() != orderv1.Order_STATUS_CONFIRMED {
				t.Fatalf("second Recv() = %v, %v; want CONFIRMED", next.GetStatus(), err)
			}
			if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
				t.Fatalf("Recv() after a final state = %v, want io.EOF", err)
			}
			if n := h.svc.changes.watched(); n != 0 {
				t.Errorf("changes.watched() = %d after the watch ended, want 0", n)
			}
		})
	}
}

func TestWatchOrderOwnership(t *testing.T) {
	h := newHarness(t)
	seed(t, h, "alice", 1)
	id := h.stored()[0].Order.GetId()
	for _, tt := range []struct {
		name, subject, role, id string
		want                    codes.Code
	}{
		{"other customer", "bob", "customer", id, codes.NotFound},
		{"missing", "alice", "customer", "ord-missing", codes.NotFound},
		{"bad id", "alice", "customer", "a/b", codes.InvalidArgument},
		{"no identity", "", "", id, codes.Unauthenticated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stream, err := h.client.WatchOrder(as(t, tt.subject, tt.role, ""), &orderv1.WatchOrderRequest{Id: tt.id})
			if err == nil {
				_, err = stream.Recv()
			}
			if status.Code(err) != tt.want {
				t.Fatalf("WatchOrder(%q) as %q = %v, want %v", tt.id, tt.subject, err, tt.want)
			}
		})
	}
}

func TestWatchOrderCancelled(t *testing.T) {
	h := newHarness(t)
	seed(t, h, "alice", 1)
	id := h.stored()[0].Order.GetId()
	ctx, cancel := context.WithCancel(alice(t, ""))
	stream, err := h.client.WatchOrder(ctx, &orderv1.WatchOrderRequest{Id: id})
	if err != nil {
		t.Fatalf("WatchOrder: %v", err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatalf("Recv: %v", err)
	}
	cancel()
	if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("Recv() after cancel = %v, want Canceled", err)
	}
}

func TestExportOrders(t *testing.T) {
	h := newHarness(t)
	seed(t, h, "alice", 2*exportPage+50)
	seed(t, h, "bob", 3)
	for _, tt := range []struct {
		name   string
		format orderv1.ExportOrdersRequest_Format
		ctype  string
		rows   func(t *testing.T, data []byte) int
	}{
		{"csv", orderv1.ExportOrdersRequest_FORMAT_CSV, contentCSV, func(t *testing.T, data []byte) int {
			recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil || strings.Join(recs[0], ",") != strings.Join(exportColumns, ",") {
				t.Fatalf("csv = %v, %v; want a header line", recs[0], err)
			}
			return len(recs) - 1
		}},
		{"ndjson", orderv1.ExportOrdersRequest_FORMAT_UNSPECIFIED, contentNDJSON, func(t *testing.T, data []byte) int {
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			for _, l := range lines {
				var row map[string]any
				if err := json.Unmarshal([]byte(l), &row); err != nil || row["customer"] != "alice" {
					t.Fatalf("line %q: %v, customer %v; want alice's", l, err, row["customer"])
				}
				// The API's JSON rules: an int64 is a string; a count is named as one.
				if _, ok := row["totalMinor"].(string); !ok {
					t.Fatalf("line %q: totalMinor is %T, want a string (an int64)", l, row["totalMinor"])
				}
				if _, ok := row["lineCount"].(float64); !ok || row["lines"] != nil {
					t.Fatalf("line %q: want lineCount a number and no lines", l)
				}
			}
			return len(lines)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stream, err := h.client.ExportOrders(alice(t, ""), &orderv1.ExportOrdersRequest{Format: tt.format})
			if err != nil {
				t.Fatalf("ExportOrders: %v", err)
			}
			var all []byte
			chunks := 0
			for {
				c, err := stream.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("Recv: %v", err)
				}
				if c.GetContentType() != tt.ctype {
					t.Errorf("content type %q, want %q", c.GetContentType(), tt.ctype)
				}
				chunks++
				all = append(all, c.GetData()...)
			}
			if n := tt.rows(t, all); n != 2*exportPage+50 || chunks != 3 {
				t.Errorf("export = %d rows in %d chunks, want %d in 3", n, chunks, 2*exportPage+50)
			}
		})
	}
}
