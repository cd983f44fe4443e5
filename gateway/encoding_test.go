package gateway

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"net/http"
	"strings"
	"testing"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func deflated(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw, _ := flate.NewWriter(&b, flate.BestCompression)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return b.String()
}

// TestContentEncoding: a gzip body is decoded within the body limit (the
// limit bounds the decoded size, so a zip bomb is 413); any other coding,
// or more than one, is 415 with Accept-Encoding naming what is accepted
// (RFC 9110 section 15.5.16).
func TestContentEncoding(t *testing.T) {
	h := newHarness(t, setup{})
	var got *orderv1.CreateOrderRequest
	h.order.createOrder = func(_ context.Context, r *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
		got = r
		return &orderv1.Order{Id: "ord-1", Status: orderv1.Order_STATUS_CONFIRMED}, nil
	}
	// A whole valid body, padded with whitespace past the 1 MiB limit once decoded.
	bomb := gzipped(t, orderBody+strings.Repeat(" ", 8<<20))
	tests := []struct {
		name       string
		encoding   []string
		body       string
		wantStatus int
		wantCode   string
	}{
		{"gzip", []string{"gzip"}, gzipped(t, orderBody), http.StatusCreated, ""},
		{"gzip upper case", []string{"GZIP"}, gzipped(t, orderBody), http.StatusCreated, ""},
		{"x-gzip", []string{"x-gzip"}, gzipped(t, orderBody), http.StatusCreated, ""},
		{"identity", []string{"identity"}, orderBody, http.StatusCreated, ""},
		{"plain body labelled gzip", []string{"gzip"}, orderBody, http.StatusBadRequest, "INVALID_ARGUMENT"},
		{"truncated gzip", []string{"gzip"}, gzipped(t, orderBody)[:30], http.StatusBadRequest, "INVALID_ARGUMENT"},
		{"gzip of bad JSON", []string{"gzip"}, gzipped(t, `{"lines":[`), http.StatusBadRequest, "INVALID_JSON"},
		{"zip bomb", []string{"gzip"}, bomb, http.StatusRequestEntityTooLarge, "CONTENT_TOO_LARGE"},
		{"br", []string{"br"}, orderBody, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"},
		{"deflate", []string{"deflate"}, deflated(t, orderBody), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"},
		{"unknown", []string{"snappy"}, orderBody, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"},
		{"stacked in one header", []string{"gzip, gzip"}, gzipped(t, gzipped(t, orderBody)), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"},
		{"stacked in two headers", []string{"gzip", "gzip"}, gzipped(t, gzipped(t, orderBody)), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"},
		{"empty", []string{""}, orderBody, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			header := []string{"Idempotency-Key: k-" + strings.ReplaceAll(tt.name, " ", "-")}
			for _, e := range tt.encoding {
				header = append(header, "Content-Encoding: "+e)
			}
			r := h.do(http.MethodPost, "/api/orders", aliceToken, tt.body, header...)
			if r.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d: %s", r.status, tt.wantStatus, r.body)
			}
			if tt.wantCode == "" {
				if got == nil || len(got.GetLines()) != 1 || got.GetLines()[0].GetSku() != "keyboard-001" {
					t.Errorf("upstream got %v, want the decoded order", got)
				}
				return
			}
			if code := r.json(t)["code"]; code != tt.wantCode {
				t.Errorf("code = %v, want %s", code, tt.wantCode)
			}
			if got != nil {
				t.Errorf("upstream was called with %v", got)
			}
			if tt.wantStatus == http.StatusUnsupportedMediaType {
				if ae := r.header.Get("Accept-Encoding"); ae != "gzip" {
					t.Errorf("Accept-Encoding = %q, want gzip", ae)
				}
				if detail, _ := r.json(t)["detail"].(string); !strings.Contains(detail, "gzip") {
					t.Errorf("detail %q does not name the accepted encodings", detail)
				}
			}
		})
	}
}
