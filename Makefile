# ldp's build, test and demo entry points. `make help` lists them.
SHELL    := /bin/bash
GO       ?= go
BIN      := bin/ldp
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
# -s -w drop the symbol table and DWARF (225 MB -> 169 MB); panics still print file:line stack
# traces (Go keeps pclntab), only debuggers lose symbols: make LDFLAGS=... keeps them.
LDFLAGS  := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 20s
# go test's own limit is 10 minutes a package; cmd/ldp's scripts take longer than that on a
# loaded 2-core machine (17 were killed mid-command once), so the run gets headroom.
TEST_TIMEOUT ?= 45m

.DEFAULT_GOAL := help
.PHONY: help build install test test-rest test-k8s demo bench fmt fmtcheck sizecheck vectorscheck vet fuzz clean

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z]+:.*## / {printf "  make %-9s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# bin/ldp is the slim build (-tags nokube): no Kubernetes package (client-go, controller-runtime:
# a fifth of the binary, a quarter of every verb's start-up). Its Kubernetes verbs (ldp
# controller, ldp export k8s/crds, ldp backfill --cluster) run bin/ldp-kube, the full build,
# which sits beside it. go install ./cmd/ldp (no tags) is one full binary that does all.
build: ## Build bin/ldp (slim) and bin/ldp-kube (the full binary its Kubernetes verbs run)
	$(GO) build -tags nokube -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ldp
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)-kube ./cmd/ldp

PREFIX ?= $(shell $(GO) env GOPATH)
install: build ## Install ldp and ldp-kube into $(PREFIX)/bin (default: $(go env GOPATH)/bin)
	mkdir -p $(PREFIX)/bin
	install -m 0755 $(BIN) $(PREFIX)/bin/ldp
	install -m 0755 $(BIN)-kube $(PREFIX)/bin/ldp-kube
	@echo "installed $(PREFIX)/bin/ldp; if 'ldp' is not found, add $(PREFIX)/bin to your PATH"

test: fmtcheck vet sizecheck ## Check formatting, vet, file sizes, and run every test (the concurrent backfill also under -race)
	@# go test -json through hack/testsummary: go test's usual lines, and every skipped test
	@# with its reason (without -v, go test hides that a tier did not run).
	$(GO) build -o bin/testsummary ./hack/testsummary
	set -o pipefail; $(GO) test -count=1 -json -timeout $(TEST_TIMEOUT) ./... | bin/testsummary
	$(GO) test -count=1 -race -timeout 20m -run 'Group|Backfill' ./internal/lake ./controllers

LDP_TOOLS ?= $(HOME)/.cache/ldp-tools
test-rest: ## Run the REST catalog tier against SeaweedFS (built once by hack/seaweedfs/build.sh, about 9 min)
	@test -x $(LDP_TOOLS)/weed || LDP_TOOLS=$(LDP_TOOLS) bash hack/seaweedfs/build.sh
	LDP_TEST_REST=1 LDP_TOOLS=$(LDP_TOOLS) $(GO) test -count=1 -timeout 20m -run 'REST' ./cmd/ldp

test-k8s: ## Run the Kubernetes tier: ldp controller on a real kube-apiserver and etcd (built once by hack/envtest/build.sh, about 11 min)
	@test -x $(LDP_TOOLS)/k8s/kube-apiserver || LDP_TOOLS=$(LDP_TOOLS) bash hack/envtest/build.sh
	$(GO) build -o bin/testsummary ./hack/testsummary
	set -o pipefail; KUBEBUILDER_ASSETS=$(LDP_TOOLS)/k8s $(GO) test -tags envtest -count=1 -json -timeout 20m -run 'TestKubernetes' ./cmd/ldp ./controllers/kube | bin/testsummary

demo: build ## Run the demo (offline): builds ./ldp-demo and tells the story
	./$(BIN) demo --workdir ldp-demo

bench: build ## Measure ldp against its references and write docs/benchmarks.md (about 35 min, on a quiet machine)
	$(GO) build -o bin/ldp-bench ./hack/bench
	@# The backfill part runs the ldp of d0dceec beside bin/ldp; -fetch-old builds it once into
	@# $${XDG_CACHE_HOME:-~/.cache}/ldp-bench (the bench's only step that may download modules).
	./bin/ldp-bench -fetch-old
	./bin/ldp-bench -ldp $(BIN) -out docs/benchmarks.md -save bin/bench.figures
	$(GO) test -run '^$$' -bench . -benchtime 20x -timeout 30m ./internal/lake ./schemas

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

# -fuzzminimizetime: go test minimizes every input that reaches new code for up to 60 s by
# default, and reports no executions meanwhile. A CUE validation takes milliseconds, so the two
# workers spent all of a 20 s run minimizing their first finds (96 executions, then 0 a second).
fuzz: ## Fuzz spec loading and validation for FUZZTIME (20s)
	$(GO) test ./schemas -run '^$$' -fuzz FuzzValidate -fuzztime $(FUZZTIME) -fuzzminimizetime 50x -timeout 10m

clean: ## Remove build output
	rm -rf bin
