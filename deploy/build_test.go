package deploy

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildAsDockerfile builds the binary exactly as the image's build
// stage does (deploy/build.sh, which the Dockerfile runs: see
// TestDockerfile) and checks what the image relies on: static (it runs
// FROM scratch), trimmed paths and symbols, no VCS stamp but the commit given, which
// `portico version` prints.
func TestBuildAsDockerfile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the binary without -race; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "portico")
	const commit = "deploytest01"
	cmd := exec.Command("sh", "deploy/build.sh", bin)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "COMMIT="+commit, "GOFLAGS=") // the script alone decides the flags
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy/build.sh: %v\n%s", err, out)
	}
	checkBuildSettings(t, bin)
	checkStatic(t, bin)
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("portico version: %v", err)
	}
	if !strings.Contains(string(out), "commit "+commit+" ") {
		t.Errorf("portico version = %q, want commit %s", out, commit)
	}
	// Every subcommand and flag compose and the manifests pass exists.
	checkAssetFlags(t, bin)
}

// checkBuildSettings reads the flags the binary was built with.
func checkBuildSettings(t *testing.T, bin string) {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range info.Settings {
		got[s.Key] = s.Value
	}
	for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"} {
		if got[k] != want {
			t.Errorf("build setting %s = %q, want %q", k, got[k], want)
		}
	}
	// -trimpath keeps -ldflags out of the build info; `portico version`
	// proves -X, the missing symbol table proves -s -w (checkStatic).
	if rev, ok := got["vcs.revision"]; ok {
		t.Errorf("vcs.revision = %q: want -buildvcs=false, the commit from COMMIT", rev)
	}
}

// checkStatic: no ELF interpreter and no shared libraries, so the binary
// runs in an image without libc.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter: not static", bin)
		}
	}
	for _, name := range []string{".symtab", ".debug_info"} {
		if f.Section(name) != nil {
			t.Errorf("%s has %s: not built with -ldflags -s -w", bin, name)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s links %v: not static", bin, libs)
	}
	if b, _ := os.ReadFile(bin); bytes.Contains(b, []byte("/work/")) {
		t.Errorf("%s contains a build machine path: not trimmed", bin)
	}
}
