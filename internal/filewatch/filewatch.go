// Package filewatch tells when a file's content changes, by polling a hash
// of it. Polling by path (rather than inotify on the file) sees every way
// a file is replaced: an edit in place, an atomic rename, and Kubernetes'
// ConfigMap update, which swaps a symlink in the file's directory. A
// change is reported once its content has been the same on two polls in a
// row, so a file being written is not reported half-done; a partial file
// that stays is reported (and its reader's validation rejects it).
//
// Watch runs in the caller's goroutine until its context ends.
package filewatch

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/portico-gateway/portico/internal/boundedfile"
)

// Watch polls path every interval and calls changed after its content
// settles on something other than what it was when Watch started (or last
// reported). A file that cannot be read counts as content too (missing),
// so a deleted file that comes back is a change. interval must be
// positive.
func Watch(ctx context.Context, path string, interval time.Duration, changed func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	reported := sum(path)
	pending := reported
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur := sum(path)
		switch {
		case cur == reported:
			pending = cur
		case cur != pending:
			pending = cur // still moving: wait for it to settle
		default:
			reported = cur
			changed()
		}
	}
}

// sum is the SHA-256 of path's content; all zeros when it cannot be read
// or holds more than boundedfile.DefaultLimit (its reader refuses it too).
func sum(path string) [32]byte {
	b, err := boundedfile.Read(path, 0)
	if err != nil {
		return [32]byte{}
	}
	return sha256.Sum256(b)
}
