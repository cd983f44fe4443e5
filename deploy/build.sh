#!/bin/sh
# build.sh OUT: build the one portico binary the way the container image
# ships it. deploy/Dockerfile runs this script and so does `make test`
# (deploy's TestBuildAsDockerfile), so the flags live only here:
#   CGO_ENABLED=0  a static binary: it runs FROM scratch, no libc
#   -trimpath      no build machine paths in the binary or its stack traces
#   -buildvcs=false the image's build context has no .git; the commit comes
#                  from COMMIT through -ldflags instead, as `make build` does
#   -ldflags -s -w no symbol table or DWARF: a smaller image
#   -X ...cli.commit=$COMMIT  what `portico version` prints as the commit
# GOOS and GOARCH pass through from the environment (buildx's TARGETOS and
# TARGETARCH); empty means the build machine's.
# Run it from the repository root.
set -eu
out=${1:?usage: deploy/build.sh OUT}
commit=${COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
CGO_ENABLED=0 exec go build -trimpath -buildvcs=false \
	-ldflags "-s -w -X github.com/portico-gateway/portico/cmd/portico/internal/cli.commit=${commit}" \
	-o "$out" ./cmd/portico
