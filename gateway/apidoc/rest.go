package apidoc

import "regexp"

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

// restText applies restWords to a description.
func restText(desc string) string {
	for _, w := range restWords {
		desc = w.re.ReplaceAllString(desc, w.with)
	}
	return desc
}
