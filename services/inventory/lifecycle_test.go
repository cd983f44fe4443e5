package inventory

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

const (
	active    = inventoryv1.Reservation_STATE_ACTIVE
	committed = inventoryv1.Reservation_STATE_COMMITTED
	released  = inventoryv1.Reservation_STATE_RELEASED
)

// settle calls CommitReservation ("commit") or ReleaseReservation ("release").
func (f *fixture) settle(t *testing.T, op, id string) (*inventoryv1.Reservation, error) {
	t.Helper()
	if op == "commit" {
		return f.client.CommitReservation(ctx(t), &inventoryv1.CommitReservationRequest{Id: id})
	}
	return f.client.ReleaseReservation(ctx(t), &inventoryv1.ReleaseReservationRequest{Id: id})
}

func TestCommitAndRelease(t *testing.T) {
	tests := []struct {
		name       string
		ops        []string // all but the last must succeed
		wantState  inventoryv1.Reservation_State
		wantCode   codes.Code
		wantReason string
		wantStock  Stock // keyboard-001 afterwards, from 10 available, 4 reserved
	}{
		{"commit", []string{"commit"}, committed, codes.OK, "", Stock{Available: 6, Sold: 4}},
		{"commit twice", []string{"commit", "commit"}, committed, codes.OK, "", Stock{Available: 6, Sold: 4}},
		{"release", []string{"release"}, released, codes.OK, "", Stock{Available: 10}},
		{"release twice", []string{"release", "release"}, released, codes.OK, "", Stock{Available: 10}},
		{"commit released", []string{"release", "commit"}, released, codes.FailedPrecondition, reasonReservationReleased, Stock{Available: 10}},
		{"release committed", []string{"commit", "release"}, committed, codes.FailedPrecondition, reasonReservationCommitted, Stock{Available: 6, Sold: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, "", testItems())
				r := f.reserve(t, "order-1", line("keyboard-001", 4))
				var prev *inventoryv1.Reservation
				for i, op := range tt.ops {
					time.Sleep(1)
					got, err := f.settle(t, op, r.GetId())
					if i < len(tt.ops)-1 {
						if err != nil {
							t.Fatalf("%s: %v", op, err)
						}
						prev = got
						continue
					}
					checkErr(t, op, err, tt.wantCode, tt.wantReason)
					if err == nil && prev != nil {
						if d := cmp.Diff(prev, got, protocmp.Transform()); d != "" {
							t.Errorf("repeated %s changed the reservation (-first +repeat):\n%s", op, d)
						}
					}
				}
				stored, err := f.client.GetReservation(ctx(t), &inventoryv1.GetReservationRequest{Id: r.GetId()})
				if err != nil || stored.GetState() != tt.wantState {
					t.Errorf("GetReservation = %v, %v; want state %v", stored.GetState(), err, tt.wantState)
				}
				if got := f.stock(t, "keyboard-001"); got != tt.wantStock {
					t.Errorf("keyboard stock = %+v, want %+v", got, tt.wantStock)
				}
			})
		})
	}
}

func TestReservationNotFound(t *testing.T) {
	f := newFixture(t, "", testItems())
	tests := []struct {
		name       string
		op         string // get, commit or release
		id         string
		wantCode   codes.Code
		wantReason string
		wantFields []string
	}{
		{name: "get", op: "get", id: "res-nope", wantCode: codes.NotFound, wantReason: reasonReservationNotFound},
		{name: "commit", op: "commit", id: "res-nope", wantCode: codes.NotFound, wantReason: reasonReservationNotFound},
		{name: "release", op: "release", id: "res-nope", wantCode: codes.NotFound, wantReason: reasonReservationNotFound},
		{name: "get empty id", op: "get", wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "commit empty id", op: "commit", wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "release empty id", op: "release", wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "get 64 character id", op: "get", id: "res-" + strings.Repeat("a", 60), wantCode: codes.NotFound, wantReason: reasonReservationNotFound},
		{name: "get 65 character id", op: "get", id: "res-" + strings.Repeat("a", 61), wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "get 5000 character id", op: "get", id: strings.Repeat("r", 5000), wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "commit 5000 character id", op: "commit", id: strings.Repeat("r", 5000), wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "release 5000 character id", op: "release", id: strings.Repeat("r", 5000), wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "get id outside the alphabet", op: "get", id: "res 1/<b>", wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "commit id outside the alphabet", op: "commit", id: "res-1\n", wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "release id outside the alphabet", op: "release", id: "rés-1", wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.op == "get" {
				_, err = f.client.GetReservation(ctx(t), &inventoryv1.GetReservationRequest{Id: tt.id})
			} else {
				_, err = f.settle(t, tt.op, tt.id)
			}
			checkErr(t, tt.name, err, tt.wantCode, tt.wantReason)
			if d := cmp.Diff(tt.wantFields, badFields(err)); d != "" {
				t.Errorf("%s bad fields (-want +got):\n%s", tt.name, d)
			}
			if tt.wantCode == codes.InvalidArgument && len(tt.id) > 1 && echoes(err, tt.id) {
				t.Errorf("%s: the error echoes the invalid id: %v", tt.name, err)
			}
		})
	}
}

// TestReleaseExpired moves a synctest bubble's clock across the TTL.
func TestReleaseExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, "", testItems())
		r := f.reserve(t, "order-1", line("keyboard-001", 3), line("mouse-001", 1))
		done := f.reserve(t, "order-2", line("keyboard-001", 1))
		if _, err := f.settle(t, "commit", done.GetId()); err != nil {
			t.Fatalf("commit: %v", err)
		}
		steps := []struct {
			name      string
			advance   time.Duration
			want      int
			wantState inventoryv1.Reservation_State
		}{
			{"just before expiry", testTTL - 1, 0, active},
			{"at expiry", 1, 1, released},
			{"already released", testTTL, 0, released},
		}
		for _, s := range steps {
			time.Sleep(s.advance)
			n, err := f.svc.ReleaseExpired(ctx(t))
			if err != nil || n != s.want {
				t.Errorf("%s: ReleaseExpired = %d, %v; want %d", s.name, n, err, s.want)
			}
			got, err := f.client.GetReservation(ctx(t), &inventoryv1.GetReservationRequest{Id: r.GetId()})
			if err != nil || got.GetState() != s.wantState {
				t.Errorf("%s: state = %v, %v; want %v", s.name, got.GetState(), err, s.wantState)
			}
		}
		if s := f.stock(t, "keyboard-001"); s != (Stock{Available: 9, Sold: 1}) {
			t.Errorf("keyboard stock = %+v, want the expired 3 back and the committed 1 sold", s)
		}
		if s := f.stock(t, "mouse-001"); s != (Stock{Available: 5}) {
			t.Errorf("mouse stock = %+v, want all available", s)
		}
	})
}

func TestCommitAfterExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, "", testItems())
		r := f.reserve(t, "order-1", line("keyboard-001", 3))
		time.Sleep(testTTL)
		_, err := f.settle(t, "commit", r.GetId())
		checkErr(t, "CommitReservation after TTL", err, codes.FailedPrecondition, reasonReservationReleased)
		got, err := f.client.GetReservation(ctx(t), &inventoryv1.GetReservationRequest{Id: r.GetId()})
		if err != nil || got.GetState() != released {
			t.Errorf("GetReservation = %v, %v; want RELEASED (the release is kept)", got.GetState(), err)
		}
		if s := f.stock(t, "keyboard-001"); s != (Stock{Available: 10}) {
			t.Errorf("keyboard stock = %+v, want all 10 available", s)
		}
		again := f.reserve(t, "order-1", line("keyboard-001", 3))
		if again.GetState() != released || again.GetId() != r.GetId() {
			t.Errorf("ReserveStock repeat after expiry = %v, want the released reservation", again)
		}
	})
}

func TestReserveRepeatReleasesExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, "", testItems())
		r := f.reserve(t, "order-1", line("keyboard-001", 3))
		time.Sleep(testTTL + 1)
		again := f.reserve(t, "order-1", line("keyboard-001", 3))
		if again.GetId() != r.GetId() || again.GetState() != released {
			t.Errorf("ReserveStock repeat past TTL = %v, want %s RELEASED", again, r.GetId())
		}
		if s := f.stock(t, "keyboard-001"); s != (Stock{Available: 10}) {
			t.Errorf("keyboard stock = %+v, want all 10 available", s)
		}
	})
}
