package apidoc

import (
	"regexp"
	"strings"
)

// restWords rewrites what a proto comment says in gRPC terms into what a
// REST client sees at the edge: the metadata the edge maps to headers.
var restWords = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`gRPC\s+metadata\s+"idempotency-key"`), `Idempotency-Key header`},
	{regexp.MustCompile(`"x-portico-replayed:\s+true"`), `"Idempotent-Replayed: true"`},
	{regexp.MustCompile(`x-portico-replayed`), `Idempotent-Replayed`},
}

// restNotes are paragraphs added to an operation's description (keyed by
// RPC name) where the edge behaves differently from a direct gRPC call.
var restNotes = map[string]string{
	"/portico.inventory.v1.InventoryService/UpdateItem": "Over REST, only the fields sent in the body change: without an updateMask parameter the edge derives the mask from the body's fields. With updateMask, the fields it names are set from the body, and a named field the body leaves out is set to its zero value (updateMask=available with no available in the body sets the stock to 0).",
}

// restText applies restWords to a description and appends the RPC's note.
func restText(rpc, desc string) string {
	for _, w := range restWords {
		desc = w.re.ReplaceAllString(desc, w.with)
	}
	if n := restNotes[rpc]; n != "" && !strings.Contains(desc, n) {
		desc += "\n\n" + n
	}
	return desc
}
