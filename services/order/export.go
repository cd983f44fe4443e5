package order

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/protocheck"
)

// exportPage is how many orders one chunk of ExportOrders holds: one store
// read, one message. A chunk is at most a few hundred KiB.
const exportPage = 200

// Content types of the export formats.
const (
	contentNDJSON = "application/x-ndjson"
	contentCSV    = "text/csv; charset=utf-8"
)

// exportColumns are the export's fields, in CSV column order; NDJSON lines
// use the same names as keys, every value a string (the API's JSON rules:
// totalMinor is an int64, so a string of digits) but lineCount, a number.
// lineCount is how many lines the order has, not the lines themselves.
// docs/api.md ("Exports") and the OpenAPI examples describe the row.
var exportColumns = []string{"id", "customer", "status", "totalMinor", "currency", "lineCount", "paymentMethod", "failureReason", "createTime", "updateTime"}

// ExportOrders implements orderv1.OrderServiceServer: the caller's orders
// (every customer's for a role that sees all), newest first, one chunk per
// page read from the store, sent as it is read. The first chunk of a CSV
// export starts with the header line; an export with no orders is one
// chunk (the header, or empty for NDJSON), so the content type is always
// sent.
func (s *Service) ExportOrders(req *orderv1.ExportOrdersRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	ctx := stream.Context()
	p, err := caller(ctx)
	if err != nil {
		return err
	}
	if err := protocheck.Request(req); err != nil {
		return err
	}
	csvFormat := req.GetFormat() == orderv1.ExportOrdersRequest_FORMAT_CSV
	q := ListQuery{Limit: exportPage}
	if !p.SeesAll() {
		q.Customer = p.Subject
	}
	for first := true; ; first = false {
		recs, err := s.store.List(ctx, q)
		if err != nil {
			return s.storeErr(ctx, "export orders", err)
		}
		chunk := &httpbody.HttpBody{ContentType: contentNDJSON}
		if csvFormat {
			chunk.ContentType = contentCSV
			chunk.Data = csvRows(recs, first)
		} else {
			chunk.Data = ndjsonRows(recs)
		}
		if err := stream.Send(chunk); err != nil {
			return err
		}
		if len(recs) < q.Limit {
			return nil
		}
		last := recs[len(recs)-1].Order
		q.After = &Cursor{CreateTime: last.GetCreateTime().AsTime(), ID: last.GetId()}
	}
}

// exportRow is one order's export fields, as strings in column order.
func exportRow(o *orderv1.Order) []string {
	return []string{
		o.GetId(), o.GetCustomer(), strings.TrimPrefix(o.GetStatus().String(), "STATUS_"),
		strconv.FormatInt(o.GetTotal().GetAmountMinor(), 10), o.GetTotal().GetCurrency(),
		strconv.Itoa(len(o.GetLines())), o.GetPaymentMethod(), o.GetFailureReason(),
		o.GetCreateTime().AsTime().Format(time.RFC3339Nano), o.GetUpdateTime().AsTime().Format(time.RFC3339Nano),
	}
}

func csvRows(recs []*Record, header bool) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if header {
		_ = w.Write(exportColumns) // a bytes.Buffer never fails
	}
	for _, r := range recs {
		_ = w.Write(exportRow(r.Order))
	}
	w.Flush()
	return b.Bytes()
}

func ndjsonRows(recs []*Record) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		row := exportRow(r.Order)
		obj := make(map[string]any, len(row))
		for i, col := range exportColumns {
			obj[col] = row[i]
		}
		obj["lineCount"] = len(r.Order.GetLines()) // an int32: a JSON number
		line, _ := json.Marshal(obj)               // strings and numbers always encode
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
