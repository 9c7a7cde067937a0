# ldp's build, test and demo entry points. `make help` lists them.
SHELL    := /bin/bash
GO       ?= go
BIN      := bin/ldp
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
# -s -w drop the symbol table and DWARF (225 MB -> 169 MB); panics still print file:line stack
# traces (Go keeps pclntab), only debuggers lose symbols: make LDFLAGS=... keeps them.
LDFLAGS  := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 20s

.DEFAULT_GOAL := help
.PHONY: help build install test test-rest test-k8s demo bench fmt fmtcheck sizecheck vectorscheck vet fuzz clean

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z]+:.*## / {printf "  make %-9s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## Build bin/ldp
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ldp

PREFIX ?= $(shell $(GO) env GOPATH)
install: build ## Install ldp into $(PREFIX)/bin (default: $(go env GOPATH)/bin)
	mkdir -p $(PREFIX)/bin
	install -m 0755 $(BIN) $(PREFIX)/bin/ldp
	@echo "installed $(PREFIX)/bin/ldp; if 'ldp' is not found, add $(PREFIX)/bin to your PATH"

test: fmtcheck vet sizecheck ## Check formatting, vet, file sizes, and run every test (the concurrent backfill also under -race)
	@# go test -json through hack/testsummary: go test's usual lines, and every skipped test
	@# with its reason (without -v, go test hides that a tier did not run).
	$(GO) build -o bin/testsummary ./hack/testsummary
	set -o pipefail; $(GO) test -count=1 -json ./... | bin/testsummary
	$(GO) test -count=1 -race -run 'Group|Backfill' ./internal/lake ./controllers

test-rest: ## Run the REST catalog tier against SeaweedFS (build it once: hack/seaweedfs/build.sh)
	LDP_TEST_REST=1 $(GO) test -count=1 -run 'REST' ./cmd/ldp

LDP_TOOLS ?= $(HOME)/.cache/ldp-tools
test-k8s: ## Run the Kubernetes tier: ldp controller on a real kube-apiserver and etcd (built once by hack/envtest/build.sh, about 11 min)
	@test -x $(LDP_TOOLS)/k8s/kube-apiserver || bash hack/envtest/build.sh
	$(GO) build -o bin/testsummary ./hack/testsummary
	set -o pipefail; KUBEBUILDER_ASSETS=$(LDP_TOOLS)/k8s $(GO) test -tags envtest -count=1 -json -timeout 20m -run 'TestKubernetes' ./cmd/ldp | bin/testsummary

demo: build ## Run the demo (offline): builds ./ldp-demo and tells the story
	./$(BIN) demo --workdir ldp-demo

bench: build ## Measure ldp against its references and write docs/benchmarks.md (about 30 min, on a quiet machine)
	$(GO) build -o bin/ldp-bench ./hack/bench
	./bin/ldp-bench -ldp $(BIN) -out docs/benchmarks.md -save bin/bench.figures
	$(GO) test -run '^$$' -bench . -benchtime 20x ./internal/lake ./schemas

fmt: ## Format the code
	gofmt -w $$(git ls-files '*.go')

# No tracked file may pass 5 MB: build outputs and data sets stay out of the repository (a
# 182 MB binary was committed once).
sizecheck:
	@big=$$(git ls-files -z | xargs -0 -r du -k --apparent-size 2>/dev/null | awk '$$1 > 5120 {print $$2}'); \
	if [ -n "$$big" ]; then echo "tracked files over 5 MB (keep them out of git, in .gitignore):"; echo "$$big"; exit 1; fi

vectorscheck: ## Check that apis/v1/testdata/keys.json is the shared key vectors (when ../shared is beside the checkout)
	@if [ -f ../shared/vectors/keys.json ]; then cmp -s ../shared/vectors/keys.json apis/v1/testdata/keys.json && echo "key vectors: current" || { echo "apis/v1/testdata/keys.json differs from ../shared/vectors/keys.json: copy it again"; exit 1; }; else echo "key vectors: no ../shared beside this checkout"; fi

fmtcheck:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet: ## Run go vet
	$(GO) vet ./...

fuzz: ## Fuzz spec loading and validation for FUZZTIME (20s)
	$(GO) test ./schemas -run '^$$' -fuzz FuzzValidate -fuzztime $(FUZZTIME)

clean: ## Remove build output
	rm -rf bin
