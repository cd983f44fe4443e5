package boundedfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultLimit is the bound Read applies when given none: 4 MiB.
const DefaultLimit = 4 << 20

// ErrTooLarge is wrapped by the error Read returns for a file over its
// bound (test it with errors.Is).
var ErrTooLarge = errors.New("file too large")

// Read returns the content of the file at path, or an error when it holds
// more than limit bytes (limit <= 0 means DefaultLimit). The error names
// path and the bound.
func Read(path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	// A device or a pipe has no size (and a regular file may grow while
	// it is read): read one byte past the bound to know.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	case int64(len(b)) > limit:
		return nil, tooLarge(path, limit)
	}
	return b, nil
}

func tooLarge(path string, limit int64) error {
	return fmt.Errorf("%s: larger than %d bytes, the most read from it: %w", path, limit, ErrTooLarge)
}
