// Command porticoclientflow runs Portico's client flow with the Go client
// that oapi-codegen generated into ./portico from the edge's /openapi.json:
// list the inventory, create an order with an Idempotency-Key, replay it,
// read it, cancel it, and decode a 404 and a 422 problem into the typed
// Problem. internal/e2e TestClients generates the client, builds this
// program and runs it against a real `portico dev`:
//
//	porticoclientflow BASE_URL IDEMPOTENCY_KEY
//
// It prints one line per step and exits 1 at the first step that fails.
// Everything it reads comes through the generated types: a flow that no
// longer compiles against the document is a failure too.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"time"

	"porticoclientflow/portico"
)

// token is portico dev's demo customer alice.
const token = "demo-alice-token"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: porticoclientflow BASE_URL IDEMPOTENCY_KEY")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, base, key string) error {
	c, err := portico.NewClientWithResponses(base, portico.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	if err != nil {
		return err
	}
	f := &flow{c: c, key: key}
	for _, step := range []struct {
		name string
		do   func(context.Context) (string, error)
	}{
		{"listItems", f.listItems},
		{"createOrder", f.createOrder},
		{"createOrder replayed", f.replay},
		{"getOrder", f.getOrder},
		{"cancelOrder", f.cancelOrder},
		{"getOrder 404 problem", f.notFound},
		{"createOrder 422 problem", f.declined},
	} {
		got, err := step.do(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
		fmt.Printf("ok %s: %s\n", step.name, got)
	}
	return nil
}

// flow is the state the steps share: the key and the order they create.
type flow struct {
	c     *portico.ClientWithResponses
	key   string
	order portico.Order
}

func (f *flow) listItems(ctx context.Context) (string, error) {
	r, err := f.c.ListItemsWithResponse(ctx, &portico.ListItemsParams{})
	if err != nil {
		return "", err
	}
	if r.JSON200 == nil || r.JSON200.Items == nil {
		return "", unexpected(r.HTTPResponse, r.Body)
	}
	for _, it := range r.JSON200.Items {
		if text(it.Sku) == "keyboard-001" {
			return fmt.Sprintf("%d items, keyboard-001 among them", len(r.JSON200.Items)), nil
		}
	}
	return "", fmt.Errorf("keyboard-001 not listed: %s", r.Body)
}

func (f *flow) orderBody(method string) portico.CreateOrderJSONRequestBody {
	return portico.CreateOrderJSONRequestBody{
		Lines:         []portico.OrderLineInput{{Sku: "keyboard-001", Quantity: 1}},
		PaymentMethod: method,
	}
}

func (f *flow) createOrder(ctx context.Context) (string, error) {
	r, err := f.c.CreateOrderWithResponse(ctx, &portico.CreateOrderParams{IdempotencyKey: f.key}, f.orderBody("pm_card_ok"))
	if err != nil {
		return "", err
	}
	if r.JSON201 == nil || r.Headers201 == nil {
		return "", unexpected(r.HTTPResponse, r.Body)
	}
	f.order = *r.JSON201
	id := text(f.order.Id)
	switch h := r.Headers201; {
	case id == "" || text(f.order.Status) != "CONFIRMED":
		return "", fmt.Errorf("got %s, want an id and status CONFIRMED", r.Body)
	case text(h.Location) != "/api/orders/"+id:
		return "", fmt.Errorf("Location %q, want /api/orders/%s", text(h.Location), id)
	case h.IdempotentReplayed != nil:
		return "", fmt.Errorf("first answer has Idempotent-Replayed %q", *h.IdempotentReplayed)
	}
	return "201 " + id + " CONFIRMED", nil
}

func (f *flow) replay(ctx context.Context) (string, error) {
	r, err := f.c.CreateOrderWithResponse(ctx, &portico.CreateOrderParams{IdempotencyKey: f.key}, f.orderBody("pm_card_ok"))
	if err != nil {
		return "", err
	}
	if r.JSON201 == nil || r.Headers201 == nil {
		return "", unexpected(r.HTTPResponse, r.Body)
	}
	if got := text(r.Headers201.IdempotentReplayed); got != "true" {
		return "", fmt.Errorf("Idempotent-Replayed %q, want true", got)
	}
	if id := text(r.JSON201.Id); id != text(f.order.Id) {
		return "", fmt.Errorf("replay answered order %s, want %s", id, text(f.order.Id))
	}
	return "Idempotent-Replayed: true, same order " + text(r.JSON201.Id), nil
}

func (f *flow) getOrder(ctx context.Context) (string, error) {
	id := text(f.order.Id)
	r, err := f.c.GetOrderWithResponse(ctx, id, &portico.GetOrderParams{})
	if err != nil {
		return "", err
	}
	if r.JSON200 == nil {
		return "", unexpected(r.HTTPResponse, r.Body)
	}
	if text(r.JSON200.Id) != id || text(r.JSON200.Status) != "CONFIRMED" {
		return "", fmt.Errorf("got %s, want %s CONFIRMED", r.Body, id)
	}
	return id + " CONFIRMED", nil
}

func (f *flow) cancelOrder(ctx context.Context) (string, error) {
	id := text(f.order.Id)
	r, err := f.c.CancelOrderWithResponse(ctx, id, &portico.CancelOrderParams{}, portico.CancelOrderJSONRequestBody{})
	if err != nil {
		return "", err
	}
	if r.JSON200 == nil {
		return "", unexpected(r.HTTPResponse, r.Body)
	}
	if text(r.JSON200.Id) != id || text(r.JSON200.Status) != "CANCELLED" {
		return "", fmt.Errorf("got %s, want %s CANCELLED", r.Body, id)
	}
	return id + " CANCELLED", nil
}

func (f *flow) notFound(ctx context.Context) (string, error) {
	r, err := f.c.GetOrderWithResponse(ctx, "ord-missing", &portico.GetOrderParams{})
	if err != nil {
		return "", err
	}
	if r.ApplicationproblemJSON404 == nil {
		return "", unexpected(r.HTTPResponse, r.Body)
	}
	return checkProblem(*r.ApplicationproblemJSON404, 404, "ORDER_NOT_FOUND", "/api/orders/ord-missing")
}

func (f *flow) declined(ctx context.Context) (string, error) {
	r, err := f.c.CreateOrderWithResponse(ctx, &portico.CreateOrderParams{IdempotencyKey: f.key + "-declined"}, f.orderBody("pm_card_declined"))
	if err != nil {
		return "", err
	}
	if r.ApplicationproblemJSON422 == nil {
		return "", unexpected(r.HTTPResponse, r.Body)
	}
	return checkProblem(*r.ApplicationproblemJSON422, 422, "PAYMENT_DECLINED", "/api/orders")
}

// checkProblem checks the typed problem's members against what the edge
// must have sent.
func checkProblem(p portico.Problem, status int, code, instance string) (string, error) {
	if text(p.Status) != fmt.Sprint(status) || text(p.Code) != code || text(p.Instance) != instance ||
		text(p.TraceId) == "" || text(p.Type) == "" || text(p.Title) == "" {
		return "", fmt.Errorf("problem %+v, want status %d code %s instance %s with type, title and traceId", p, status, code, instance)
	}
	return fmt.Sprintf("Problem{status: %s, code: %s, traceId: %s}", text(p.Status), text(p.Code), text(p.TraceId)), nil
}

// unexpected reports an answer that fits none of the fields the step reads.
func unexpected(r *http.Response, body []byte) error {
	return fmt.Errorf("unexpected answer %s (%s): %s", r.Status, r.Header.Get("Content-Type"), body)
}

// text formats a scalar member whether the document makes it required (a
// value) or optional (a pointer, "" when nil), and whatever string or
// integer type (an enum's, for one) the generator gives it: the flow reads
// the members by their generated names but does not depend on those
// choices.
func text(v any) string {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return ""
		}
		rv = rv.Elem()
	}
	return fmt.Sprint(rv.Interface())
}
