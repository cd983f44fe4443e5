package cli

import (
	"context"
	"fmt"
	"runtime/debug"
)

// commit is the VCS revision, for builds without Go's own VCS stamp
// (-buildvcs=false, or a tree without .git): make build sets it with
// -ldflags "-X .../cli.commit=REV". The stamp wins when both exist.
var commit string

// goVersionUnknown stands for the Go version when the binary carries no
// build information.
const goVersionUnknown = "go-unknown"

func runVersion(_ context.Context, e env, args []string) error {
	fs, _ := newFlags("version")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	info, _ := debug.ReadBuildInfo()
	fmt.Fprint(e.stdout, versionText(info, commit))
	return nil
}

// versionText formats "portico VERSION commit REV GOVERSION" from the
// binary's build information (nil when it has none) and the -ldflags
// commit. The module version is "(devel)" for a build from a checkout.
func versionText(info *debug.BuildInfo, ldCommit string) string {
	version, rev, modified, goVersion := "", "", false, goVersionUnknown
	if info != nil {
		version, goVersion = info.Main.Version, info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if version == "" {
		version = "(devel)"
	}
	if rev == "" {
		rev = ldCommit
	}
	if rev == "" {
		rev = "unknown"
	} else if modified {
		rev += "+modified"
	}
	return fmt.Sprintf("portico %s commit %s %s\n", version, rev, goVersion)
}
