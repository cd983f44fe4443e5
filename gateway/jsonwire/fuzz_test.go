package jsonwire

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
)

// FuzzCheck holds Check to protojson on messages without well-known types:
// whatever Check accepts protojson accepts, and whatever protojson accepts
// without duplicate keys Check accepts. It never panics.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"lines":[{"sku":"keyboard-001","quantity":2}],"paymentMethod":"pm_card_ok"}`,
		`{"lines":[{"quantity":1e2}]}`, `{"lines":[{"quantity":"-0"}]}`, `{"payment_method":"x"}`,
		`{"lines":[{"quantity":1.5}]}`, `{"a":1,"a":2}`, `[`, `{"lines":[{"unitPrice":{"amountMinor":"12"}}]}`,
		`{"lines":[{"unitPrice":{"amountMinor":1e18}}]}`, `{"lines":[null]}`, "\"\xff\"", `{"lines":[{"quantity":-2147483648}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Check(createOrder, data)
		if err == nil {
			if perr := protojson.Unmarshal(out, NewMessage(createOrder)); perr != nil {
				t.Fatalf("Check accepted %q but protojson rejects %q: %v", data, out, perr)
			}
			return
		}
		e := err.(*Error)
		if perr := protojson.Unmarshal(data, NewMessage(createOrder)); perr == nil && !e.Syntax {
			t.Fatalf("protojson accepts %q but Check says %v", data, err)
		}
	})
}
