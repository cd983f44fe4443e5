# Portico's build. Every tool is pinned in tools/go.mod and run with `go tool`,
# so a machine with only Go and make can run every target.
GO    ?= go
BUF   := $(GO) tool -modfile=tools/go.mod buf
PKGS  := ./...
TESTFLAGS ?= -race -count=1 -timeout 15m

.PHONY: all build run test vet lint generate check-generated bench fmt clean

all: build

## build: the one binary, bin/portico
build:
	$(GO) build -o bin/portico ./cmd/portico

## run: all four processes with embedded defaults (portico dev)
run:
	$(GO) run ./cmd/portico dev

## test: vet, generated-code check, proto lint, then every test with -race
test: vet check-generated lint
	$(GO) test $(TESTFLAGS) $(PKGS)

vet:
	$(GO) vet $(PKGS)

## lint: buf lint (STANDARD, exceptions in buf.yaml) and buf format
lint:
	$(BUF) lint
	$(BUF) format --diff --exit-code

## generate: regenerate gen/ from proto/ (never edit gen/ by hand)
generate:
	rm -rf gen
	$(BUF) generate

## check-generated: fail when gen/ is stale
check-generated:
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	$(BUF) generate -o $$tmp && \
	diff -r gen $$tmp/gen > /dev/null || { echo "gen/ is stale: run 'make generate' and commit"; diff -r gen $$tmp/gen | head -20; exit 1; }

## bench: benchmarks with allocation counts
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go' | grep -v '^gen/')
	$(BUF) format -w

clean:
	rm -rf bin var
