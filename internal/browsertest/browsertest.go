// Package browsertest runs browser scenarios from Go tests: headless
// Chromium (Debian's chromium package) driven by playwright-core from npm,
// pinned in tools/browser/package-lock.json. A scenario is a JavaScript
// module (see tools/browser/run.mjs for its context) that gets a page and
// returns JSON; Run records every request the page made, its console, its
// errors and its screenshots.
//
// # Use
//
//	b := browsertest.Find(t) // skips the test when chromium or node is absent
//	res := b.Run(t, "testdata/browser/docs.mjs", browsertest.Options{URL: edge + "/docs"})
//	res.Hosts()            // every host the page asked for
//	res.TransferredBytes() // the page's weight
//
// # Where things are
//
//   - Chromium: $PORTICO_CHROMIUM, else chromium or chromium-browser on
//     PATH (`make browser` installs Debian's chromium).
//   - node_modules: $PORTICO_BROWSER_MODULES, else installed once by
//     NodeModules from tools/browser's lock into the user's cache
//     (os.UserCacheDir()/portico/npm-browser-<hash>).
//   - Screenshots: $PORTICO_SCREENSHOTS/<test name>, else
//     var/screenshots/<test name> under the repository root, emptied at
//     each run of the test.
//
// Under -short, and without chromium, node or npm, the test skips with the
// reason; a missing tool fails it instead when
// $PORTICO_BROWSER_REQUIRED is set (CI sets it), so a CI run cannot pass
// by skipping every browser test.
package browsertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Environment variables that move what Find finds.
const (
	ChromiumEnv    = "PORTICO_CHROMIUM"
	ModulesEnv     = "PORTICO_BROWSER_MODULES"
	ScreenshotsEnv = "PORTICO_SCREENSHOTS"
	RequiredEnv    = "PORTICO_BROWSER_REQUIRED"
)

// Browser is what a scenario needs: node, chromium, the installed
// node_modules and the runner script.
type Browser struct {
	Node     string
	Chromium string
	Modules  string // a node_modules directory holding playwright-core
	runner   string // tools/browser/run.mjs
	root     string // the repository root
}

// Find returns the browser, or skips t (fails it under
// $PORTICO_BROWSER_REQUIRED) when chromium, node or the node packages
// cannot be had. The node packages are installed once per lock and per
// machine; concurrent test binaries share the install.
func Find(t testing.TB) *Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("browser tests skipped under -short: they start Chromium")
	}
	b, err := find()
	if err != nil {
		msg := "browser tests skipped: " + err.Error()
		if os.Getenv(RequiredEnv) != "" {
			t.Fatalf("%s (%s is set, so this fails)", msg, RequiredEnv)
		}
		t.Skip(msg)
	}
	return b
}

var (
	findOnce sync.Once
	found    *Browser
	findErr  error
)

func find() (*Browser, error) {
	findOnce.Do(func() { found, findErr = locate() })
	return found, findErr
}

func locate() (*Browser, error) {
	root := repoRoot()
	b := &Browser{root: root, runner: filepath.Join(root, "tools", "browser", "run.mjs")}
	var err error
	if b.Chromium, err = chromiumPath(); err != nil {
		return nil, err
	}
	if b.Node, err = exec.LookPath("node"); err != nil {
		return nil, errors.New("node not found; install Node.js (Debian: apt-get install nodejs npm)")
	}
	if b.Modules, err = modules(filepath.Join(root, "tools", "browser")); err != nil {
		return nil, err
	}
	return b, nil
}

// chromiumPath is $PORTICO_CHROMIUM or the first chromium on PATH.
func chromiumPath() (string, error) {
	if p := os.Getenv(ChromiumEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("chromium not found at $%s=%s", ChromiumEnv, p)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("chromium not found; `make browser` installs it")
}

// modules returns the node_modules of tools/browser: $PORTICO_BROWSER_MODULES,
// or NodeModules's install of its lock.
func modules(dir string) (string, error) {
	if p := os.Getenv(ModulesEnv); p != "" {
		return p, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", errors.New("npm not found (it installs playwright-core); install Node.js 20+ with npm")
	}
	return NodeModules(dir)
}

// installTimeout bounds one npm ci.
const installTimeout = 10 * time.Minute

// NodeModules returns a node_modules directory holding exactly what dir's
// package.json and package-lock.json pin. It is kept across runs in the
// user's cache (os.UserCacheDir()/portico/npm-<dir's name>-<hash of both
// files>); a miss installs it with `npm ci --prefer-offline
// --ignore-scripts` (no package's install script runs) into a fresh
// directory renamed into place once complete, so concurrent test binaries
// and interrupted runs never see half an install.
func NodeModules(dir string) (string, error) {
	var files [2][]byte
	for i, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		files[i] = b
	}
	sum := sha256.Sum256(append(append([]byte{}, files[0]...), files[1]...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	final := filepath.Join(cache, "portico", "npm-"+filepath.Base(dir)+"-"+hex.EncodeToString(sum[:8]))
	nm := filepath.Join(final, "node_modules")
	if _, err := os.Stat(nm); err == nil {
		return nm, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", err
	}
	stage, err := os.MkdirTemp(filepath.Dir(final), "install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	for i, name := range []string{"package.json", "package-lock.json"} {
		if err := os.WriteFile(filepath.Join(stage, name), files[i], 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = stage
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
	}
	if err := os.Rename(stage, final); err != nil {
		if _, serr := os.Stat(nm); serr != nil {
			return "", err // not a concurrent install's rename
		}
	}
	return nm, nil
}

// repoRoot is the repository root: two directories above this file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// ScreenshotDir returns the (emptied) folder for t's screenshots:
// $PORTICO_SCREENSHOTS/<test name>, else var/screenshots/<test name>
// under the repository root.
func ScreenshotDir(t testing.TB) string {
	t.Helper()
	base := os.Getenv(ScreenshotsEnv)
	if base == "" {
		base = filepath.Join(repoRoot(), "var", "screenshots")
	}
	dir := filepath.Join(base, strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
