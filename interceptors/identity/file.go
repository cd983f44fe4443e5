package identity

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/portico-gateway/portico/internal/boundedfile"
)

// Environment variables the processes read their ring from (the flags and
// the edge's identity section name a file; these are the fallbacks).
const (
	// EnvKeysFile names a keys file.
	EnvKeysFile = "PORTICO_IDENTITY_KEYS_FILE"
	// EnvKeys holds the keys text itself (ParseKeys).
	EnvKeys = "PORTICO_IDENTITY_KEYS"
)

// MaxKeysFileBytes bounds a keys file (64 KiB): a ring holds a few
// short lines.
const MaxKeysFileBytes = 64 << 10

// ReadKeysFile reads and parses a keys file (at most MaxKeysFileBytes).
func ReadKeysFile(path string) (*Keys, error) {
	b, err := boundedfile.Read(path, MaxKeysFileBytes)
	if err != nil {
		return nil, err
	}
	k, err := ParseKeys(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// LoadKeys returns the ring from file, else from the file named by
// $PORTICO_IDENTITY_KEYS_FILE, else from $PORTICO_IDENTITY_KEYS; nil (no
// error) when none is set. It also returns the file it read, "" for none.
func LoadKeys(file string) (*Keys, string, error) {
	if file == "" {
		file = os.Getenv(EnvKeysFile)
	}
	if file != "" {
		k, err := ReadKeysFile(file)
		return k, file, err
	}
	if text := os.Getenv(EnvKeys); text != "" {
		k, err := ParseKeys(text)
		if err != nil {
			return nil, "", fmt.Errorf("$%s: %w", EnvKeys, err)
		}
		return k, "", nil
	}
	return nil, "", nil
}

// Watch re-reads the keys file at path every interval until ctx ends and
// passes each changed, valid ring to apply (Minter.SetKeys,
// Verifier.SetKeys): rotation without a restart. A file that fails to parse
// is reported to failed and the running ring stays.
func Watch(ctx context.Context, path string, interval time.Duration, apply func(*Keys), failed func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	last, _ := boundedfile.Read(path, MaxKeysFileBytes)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b, err := boundedfile.Read(path, MaxKeysFileBytes)
		if err != nil || string(b) == string(last) {
			if err != nil {
				failed(err)
			}
			continue
		}
		last = b
		k, err := ParseKeys(string(b))
		if err != nil {
			failed(fmt.Errorf("%s: %w", path, err))
			continue
		}
		apply(k)
	}
}
