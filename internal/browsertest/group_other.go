//go:build !unix

package browsertest

import "os/exec"

// setGroup leaves the default: a cancelled context kills node alone.
func setGroup(*exec.Cmd) {}
