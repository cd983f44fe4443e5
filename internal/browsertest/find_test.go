package browsertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocateSays: without chromium or node the reason names what is
// missing and how to get it, which Find passes to t.Skip.
func TestLocateSays(t *testing.T) {
	empty := t.TempDir()
	withChromium := t.TempDir()
	if err := os.WriteFile(filepath.Join(withChromium, "chromium"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, chromiumEnv, want string
	}{
		{"no chromium", empty, "", "chromium not found; `make browser` installs it"},
		{"chromium env missing", empty, filepath.Join(empty, "nope"), "chromium not found at $PORTICO_CHROMIUM="},
		{"no node", withChromium, "", "node not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.path)
			t.Setenv(ChromiumEnv, tt.chromiumEnv)
			_, err := locate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("locate() = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestConverse: the runner's lines are answered in order and its last
// line is the result; a malformed line or a missing result is an error.
func TestConverse(t *testing.T) {
	ask := func(name string, data json.RawMessage) (any, error) {
		if name == "bad" {
			return nil, errors.New("refused")
		}
		return name + string(data), nil
	}
	tests := []struct {
		name, out, replies, err string
		data                    string
	}{
		{"result", `{"result":{"data":{"a":1},"requests":[{"url":"http://h/","bytes":5}]}}` + "\n", "", "", `{"a":1}`},
		{"asks", `{"ask":"x","data":1}` + "\n" + `{"ask":"bad","data":null}` + "\n" + `{"result":{"data":2}}` + "\n",
			`{"reply":"x1"}` + "\n" + `{"error":"refused"}` + "\n", "", "2"},
		{"scenario error", `{"error":"boom","result":{"screenshots":["f.png"]}}` + "\n", "", "boom", ""},
		{"garbage", "hello\n", "", "runner wrote", ""},
		{"no result", "", "", "without a result", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in bytes.Buffer
			res, err := converse(strings.NewReader(tt.out), &in, ask)
			if (err != nil) != (tt.err != "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if in.String() != tt.replies {
				t.Errorf("replies = %q, want %q", in.String(), tt.replies)
			}
			if string(res.Data) != tt.data {
				t.Errorf("data = %s, want %s", res.Data, tt.data)
			}
		})
	}
}
