package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
}

// stage is one FROM and the instructions after it.
type stage struct {
	image string // after ARG substitution
	ins   []instruction
}

// parseDockerfile splits text into stages; ARGs before the first FROM are
// substituted into FROM lines (${NAME} and $NAME) with their defaults.
func parseDockerfile(text string) []stage {
	globals := map[string]string{}
	var stages []stage
	var buf strings.Builder
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if buf.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(trimmed, `\`); ok {
			buf.WriteString(cont + " ")
			continue
		}
		buf.WriteString(trimmed)
		cmd, args, _ := strings.Cut(buf.String(), " ")
		buf.Reset()
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		switch {
		case in.cmd == "FROM":
			image := strings.Fields(os.Expand(in.args, func(k string) string { return globals[k] }))[0]
			stages = append(stages, stage{image: image})
		case len(stages) == 0 && in.cmd == "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			globals[k] = v
		case len(stages) > 0:
			stages[len(stages)-1].ins = append(stages[len(stages)-1].ins, in)
		}
	}
	return stages
}

// pinned reports whether image names a fixed version: scratch, a digest,
// or a tag with a version number (never latest or no tag at all).
func pinned(image string) bool {
	if image == "scratch" || strings.Contains(image, "@sha256:") {
		return true
	}
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return false
	}
	tag := image[i+1:]
	return tag != "latest" && strings.ContainsAny(tag, "0123456789")
}

// checkDockerfile returns every way text falls short of the image the
// deploy assets rely on; ports are the contract's.
func checkDockerfile(text string, ports map[string]int) []string {
	var bad []string
	stages := parseDockerfile(text)
	if len(stages) < 2 {
		return []string{fmt.Sprintf("%d stages, want a multi-stage build", len(stages))}
	}
	built := false
	for i, s := range stages {
		if !pinned(s.image) {
			bad = append(bad, fmt.Sprintf("stage %d: base image %q is not pinned to a version tag or digest", i, s.image))
		}
		for _, in := range s.ins {
			if in.cmd == "RUN" && strings.Contains(in.args, "deploy/build.sh") {
				built = true
			}
			if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
				bad = append(bad, fmt.Sprintf("stage %d: RUN %q: build with deploy/build.sh, the flags' one home", i, in.args))
			}
			if in.cmd == "ENV" && (strings.Contains(in.args, "GO") || strings.Contains(in.args, "CGO")) {
				bad = append(bad, fmt.Sprintf("stage %d: ENV %q: Go build settings belong in deploy/build.sh", i, in.args))
			}
		}
	}
	if !built {
		bad = append(bad, "no stage runs deploy/build.sh")
	}
	return append(bad, checkFinalStage(stages[len(stages)-1], ports)...)
}

// checkFinalStage checks the image that ships: a non-root numeric USER,
// exec-form ENTRYPOINT, a HEALTHCHECK decision, CA certificates, and
// EXPOSE naming exactly the contract's ports.
func checkFinalStage(s stage, ports map[string]int) []string {
	var bad []string
	last := map[string]string{}
	var exposed []int
	copies := ""
	for _, in := range s.ins {
		last[in.cmd] = in.args
		switch in.cmd {
		case "EXPOSE":
			for _, p := range strings.Fields(in.args) {
				n, err := strconv.Atoi(strings.TrimSuffix(p, "/tcp"))
				if err != nil {
					bad = append(bad, fmt.Sprintf("EXPOSE %q: not a TCP port", p))
				}
				exposed = append(exposed, n)
			}
		case "COPY":
			copies += in.args + "\n"
		}
	}
	uid, _, _ := strings.Cut(last["USER"], ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		bad = append(bad, fmt.Sprintf("USER %q: want a numeric non-root uid (Kubernetes' runAsNonRoot can verify only a number)", last["USER"]))
	}
	var entry []string
	if err := json.Unmarshal([]byte(last["ENTRYPOINT"]), &entry); err != nil || len(entry) == 0 {
		bad = append(bad, fmt.Sprintf("ENTRYPOINT %q: want the exec form [\"/path/portico\"] (no shell in the image)", last["ENTRYPOINT"]))
	} else if !strings.Contains(copies, entry[0]) {
		bad = append(bad, fmt.Sprintf("ENTRYPOINT %s: no COPY puts the binary there", entry[0]))
	}
	bad = append(bad, checkHealthcheck(last, entry)...)
	if s.image == "scratch" && !strings.Contains(copies, "ca-certificates") {
		bad = append(bad, "FROM scratch without COPY of CA certificates: TLS to upstreams and OTLP would fail")
	}
	var want []int
	for _, p := range ports {
		want = append(want, p)
	}
	slices.Sort(want)
	slices.Sort(exposed)
	if !slices.Equal(exposed, want) {
		bad = append(bad, fmt.Sprintf("EXPOSE %v, want the contract's ports %v", exposed, want))
	}
	return bad
}

// checkHealthcheck: the final stage decides on a HEALTHCHECK: NONE (the
// orchestrator probes), or an exec-form CMD running the image's binary.
func checkHealthcheck(last map[string]string, entry []string) []string {
	hc, ok := last["HEALTHCHECK"]
	switch {
	case !ok:
		return []string{"no HEALTHCHECK: say NONE (orchestrator probes) or run the binary's probe"}
	case hc == "NONE":
		return nil
	}
	_, cmd, _ := strings.Cut(hc, "CMD ")
	var argv []string
	if err := json.Unmarshal([]byte(strings.TrimSpace(cmd)), &argv); err != nil || len(argv) == 0 || len(entry) == 0 || argv[0] != entry[0] {
		return []string{fmt.Sprintf("HEALTHCHECK %q: want NONE or CMD in exec form running %v", hc, entry)}
	}
	return nil
}

func readDockerfile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDockerfile: deploy/Dockerfile builds a pinned, multi-stage, non-root
// image of the binary built by deploy/build.sh, exposing the contract's
// ports.
func TestDockerfile(t *testing.T) {
	for _, p := range checkDockerfile(readDockerfile(t), contractPorts(t)) {
		t.Error(p)
	}
}

// TestCheckDockerfileCatches: each way to break the Dockerfile is caught,
// so TestDockerfile can fail.
func TestCheckDockerfileCatches(t *testing.T) {
	good := readDockerfile(t)
	tests := []struct {
		name, old, new, want string
	}{
		{"root user", "USER 65532:65532", "USER root", "non-root uid"},
		{"uid 0", "USER 65532:65532", "USER 0:0", "non-root uid"},
		{"no user", "USER 65532:65532", "", "non-root uid"},
		{"latest base", "ARG GO_IMAGE=golang:1.26.8-bookworm", "ARG GO_IMAGE=golang:latest", "not pinned"},
		{"untagged base", "ARG GO_IMAGE=golang:1.26.8-bookworm", "ARG GO_IMAGE=golang", "not pinned"},
		{"port missing", "EXPOSE 43100 43101 43102 43103", "EXPOSE 43100 43101 43102", "contract's ports"},
		{"wrong port", "EXPOSE 43100 43101 43102 43103", "EXPOSE 8080 43101 43102 43103", "contract's ports"},
		{"own go build", "sh deploy/build.sh /out/portico", "go build -o /out/portico ./cmd/portico", "deploy/build.sh"},
		{"cgo env", "WORKDIR /src", "WORKDIR /src\nENV CGO_ENABLED=1", "belong in deploy/build.sh"},
		{"shell entrypoint", `ENTRYPOINT ["/usr/local/bin/portico"]`, "ENTRYPOINT /usr/local/bin/portico", "exec form"},
		{"no healthcheck decision", "HEALTHCHECK NONE", "", "HEALTHCHECK"},
		{"shell healthcheck", "HEALTHCHECK NONE", "HEALTHCHECK CMD curl -f http://localhost:43100/healthz/live", "exec form"},
		{"no CA certificates", "COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt", "", "CA certificates"},
		{"single stage", "FROM scratch\n", "", "multi-stage"},
	}
	ports := contractPorts(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(good, tt.old) {
				t.Fatalf("Dockerfile lacks %q; update the case", tt.old)
			}
			got := strings.Join(checkDockerfile(strings.Replace(good, tt.old, tt.new, 1), ports), "\n")
			if !strings.Contains(got, tt.want) {
				t.Errorf("checkDockerfile(with %q) = %q, want a problem mentioning %q", tt.new, got, tt.want)
			}
		})
	}
}
