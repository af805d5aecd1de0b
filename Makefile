# sms: self-modifying software as a Kubernetes operator.
# `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

# Tools are pinned and installed into ./bin with `go install`.
LOCALBIN ?= $(shell pwd)/bin
# TOOLBIN holds the pinned tools; .ci/run points it at a cache outside the
# checkout so a fresh clone reuses them.
TOOLBIN ?= $(LOCALBIN)
CONTROLLER_TOOLS_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
BENCHSTAT_VERSION ?= v0.0.0-20260908200009-22c9c6c9d4da
KUSTOMIZE_VERSION ?= v5.8.2
CONTROLLER_GEN ?= $(TOOLBIN)/controller-gen
GOLANGCI_LINT ?= $(TOOLBIN)/golangci-lint
BENCHSTAT ?= $(TOOLBIN)/benchstat
KUSTOMIZE ?= $(TOOLBIN)/kustomize
KUBECTL ?= kubectl

# Image of the manager (operator, kernels and sandboxes share it).
IMG ?= controller:latest
# DEPLOY_CONFIG is the kustomization make deploy applies: config/default
# (webhook certificate from cert-manager) or config/selfsigned (the
# operator manages its own).
DEPLOY_CONFIG ?= config/default
# CONTAINER_TOOL builds and pushes the image: docker or podman.
CONTAINER_TOOL ?= docker

# Test settings.
# The real-cluster tests run on their own after the rest (CLUSTER_PKGS),
# so that nothing else competes with the cluster for the two cores.
CLUSTER_PKGS ?= ./test/e2e/cluster/
TEST_PKGS ?= $(shell go list ./... | grep -v /test/e2e/cluster)
# The end-to-end tests build the binaries inside the test binary, which on
# a cold build cache takes minutes: go test's default 10 m is too tight.
TEST_FLAGS ?= -race -timeout 30m
COVER_PROFILE ?= cover.out
BENCH ?= .
BENCH_COUNT ?= 6
BENCH_PKGS ?= ./...
FUZZTIME ?= 10s

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-15s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs, RBAC and webhook manifests from the API types.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths="./..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods for the API types.
	$(CONTROLLER_GEN) object paths="./..."

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: dev
dev: binaries ## Run the whole product here: embedded kube-apiserver and etcd, the operator, local kernels (state in .sms; ARGS go to manager dev).
	$(LOCALBIN)/manager dev $(ARGS)

.PHONY: demo
demo: binaries ## Run the demo story offline against manager dev (its own state directory); fails on any unmet expectation.
	MANAGER=$(LOCALBIN)/manager KUBECTL_SMS_DIR=$(LOCALBIN) KUBECTL=$(KUBECTL) hack/demo.sh

.PHONY: binaries
binaries: | $(LOCALBIN) ## Build bin/manager, bin/sms-kernel and bin/sms-sandbox (the kernel and sandbox binaries of the image), bin/kubectl-sms (the kubectl plugin: put bin on PATH) and bin/erp-kernel (the example application's kernel).
	go build -o $(LOCALBIN)/ ./cmd/manager ./cmd/sms-kernel ./cmd/sms-sandbox
	go build -o $(LOCALBIN)/kubectl-sms ./cmd/kubectl-sms
	go build -o $(LOCALBIN)/erp-kernel ./examples/erp/cmd/erp-kernel

.PHONY: test
test: vet ## Run go vet, the architecture test, then every test and every benchmark (once, so that none can break unnoticed) with -race against a throwaway Postgres, a throwaway S3 server (hack/s3.sh), headless Chromium (hack/chromium.sh), the claude and codex CLIs (hack/agent-clis.sh) and envtest's API server (built once by hack/setup-envtest.sh); print total coverage; then the tests on a real one-node cluster (hack/realk8s.sh).
	go test -count=1 ./internal/architecture/
	envtest_env="$$(hack/setup-envtest.sh)" || exit 1; eval "$$envtest_env"; \
	pg_env="$$(hack/postgres.sh start)" || exit 1; eval "$$pg_env"; \
	s3_env="$$(hack/s3.sh start)" || exit 1; eval "$$s3_env"; \
	trap 'hack/postgres.sh stop "$$SMS_POSTGRES_DIR"; hack/s3.sh stop "$$SMS_S3_DIR"' EXIT; \
	chromium_env="$$(hack/chromium.sh)" || exit 1; eval "$$chromium_env"; \
	clis_env="$$(hack/agent-clis.sh)" || exit 1; eval "$$clis_env"; \
	SMS_REQUIRE_POSTGRES=1 SMS_REQUIRE_S3=1 SMS_REQUIRE_BROWSER=1 SMS_REQUIRE_AGENT_CLIS=1 go test $(TEST_FLAGS) -count=1 -coverpkg=./... -coverprofile=$(COVER_PROFILE) \
		-bench . -benchtime 1x $(TEST_PKGS) | { grep --line-buffered -Ev '^(PASS$$|goos|goarch|pkg|cpu|Benchmark\S+\s+[0-9])' || true; }; \
	go tool cover -func=$(COVER_PROFILE) | tail -n 1
	echo "The real-cluster tests (hack/realk8s.sh; builds its components once):"
	go test -count=1 -timeout 30m $(CLUSTER_PKGS)

.PHONY: lint
lint: golangci-lint ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint and apply its fixes.
	$(GOLANGCI_LINT) run --fix ./...

.PHONY: bench
bench: benchstat ## Run the benchmarks BENCH_COUNT times and summarize them with benchstat.
	pg_env="$$(hack/postgres.sh start)" || exit 1; eval "$$pg_env"; \
	s3_env="$$(hack/s3.sh start)" || exit 1; eval "$$s3_env"; \
	trap 'hack/postgres.sh stop "$$SMS_POSTGRES_DIR"; hack/s3.sh stop "$$SMS_S3_DIR"' EXIT; \
	go test -run '^$$' -bench '$(BENCH)' -count $(BENCH_COUNT) $(BENCH_PKGS) | tee bench.out
	$(BENCHSTAT) bench.out

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each.
	@for pkg in $$(go list ./...); do \
	  for fn in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$fn"; go test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

.PHONY: verify
verify: generate manifests ## Regenerate code and manifests and fail if the tree changed.
	@git diff --exit-code || { echo "generated files are out of date: run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all config api 2>/dev/null)" || { echo "untracked generated files"; git status --porcelain config api; exit 1; }

##@ Build

.PHONY: build
build: vet ## Build every package, and the binaries under cmd/ into ./bin.
	go build ./...
	@for d in cmd/*/; do [ -d "$$d" ] || continue; go build -o $(LOCALBIN)/$$(basename $$d) ./$$d; done

.PHONY: run
run: ## Run the manager from your host (ARGS are passed through).
	@[ -d cmd/manager ] || { echo "cmd/manager does not exist yet"; exit 1; }
	go run ./cmd/manager $(ARGS)

# docker-build needs a container engine; the Dockerfile's base images are
# named without a registry, so the engine's own search list resolves them.
.PHONY: docker-build
docker-build: ## Build the manager image IMG with CONTAINER_TOOL.
	$(CONTAINER_TOOL) build -t $(IMG) .

# image needs no container engine: the same static binary and CA bundle as
# the Dockerfile, written as an OCI archive by hack/oci-image.sh, for
# `ctr images import` (or `skopeo copy oci-archive:...`).
IMAGE_ARCHIVE ?= $(LOCALBIN)/manager-image.tar
.PHONY: image
image: ## Write the manager image IMG as an OCI archive (IMAGE_ARCHIVE) without a container engine.
	mkdir -p $(LOCALBIN)/static
	CGO_ENABLED=0 go build -tags nodev -trimpath -ldflags="-s -w" -o $(LOCALBIN)/static/ ./cmd/manager ./cmd/sms-kernel ./cmd/sms-sandbox
	hack/oci-image.sh $(IMAGE_ARCHIVE) $(IMG) 65532:65532 /manager \
		$(LOCALBIN)/static/manager=/manager $(LOCALBIN)/static/sms-kernel=/sms-kernel $(LOCALBIN)/static/sms-sandbox=/sms-sandbox \
		/etc/ssl/certs/ca-certificates.crt=/etc/ssl/certs/ca-certificates.crt

# The example application's kernel image: the same static build and layout
# as the manager's, with examples/erp's kernel binary as the entrypoint.
ERP_IMG ?= localhost/sms/erp-kernel:dev
ERP_IMAGE_ARCHIVE ?= $(LOCALBIN)/erp-kernel-image.tar
.PHONY: erp-image
erp-image: ## Write the example ERP's kernel image ERP_IMG as an OCI archive (ERP_IMAGE_ARCHIVE).
	mkdir -p $(LOCALBIN)
	mkdir -p $(LOCALBIN)/static
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o $(LOCALBIN)/static/ ./examples/erp/cmd/erp-kernel ./cmd/sms-sandbox
	hack/oci-image.sh $(ERP_IMAGE_ARCHIVE) $(ERP_IMG) 65532:65532 /erp-kernel \
		$(LOCALBIN)/static/erp-kernel=/erp-kernel $(LOCALBIN)/static/sms-sandbox=/sms-sandbox \
		/etc/ssl/certs/ca-certificates.crt=/etc/ssl/certs/ca-certificates.crt

.PHONY: docker-push
docker-push: ## Push the manager image IMG with CONTAINER_TOOL.
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: build-installer
build-installer: manifests generate kustomize ## Write dist/install.yaml: CRDs, RBAC, webhooks and the manager running IMG.
	mkdir -p dist
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=$(IMG)
	"$(KUSTOMIZE)" build config/default > dist/install.yaml

##@ Deployment

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: manifests kustomize ## Install the CRDs into the cluster of the current kubeconfig context.
	"$(KUSTOMIZE)" build config/crd | "$(KUBECTL)" apply -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Uninstall the CRDs (and every Tenant, Plugin and Approval). ignore-not-found=true ignores missing ones.
	"$(KUSTOMIZE)" build config/crd | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: deploy
deploy: manifests kustomize ## Deploy the operator running IMG from DEPLOY_CONFIG (config/default needs cert-manager; config/selfsigned does not).
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=$(IMG)
	"$(KUSTOMIZE)" build $(DEPLOY_CONFIG) | "$(KUBECTL)" apply -f -

.PHONY: undeploy
undeploy: kustomize ## Remove the operator and the CRDs. ignore-not-found=true ignores missing objects.
	"$(KUSTOMIZE)" build $(DEPLOY_CONFIG) | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -f -

##@ Tools

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

ifneq ($(TOOLBIN),$(LOCALBIN))
$(TOOLBIN):
	mkdir -p $(TOOLBIN)
endif

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into ./bin.
$(CONTROLLER_GEN): | $(TOOLBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint into ./bin.
$(GOLANGCI_LINT): | $(TOOLBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

.PHONY: benchstat
benchstat: $(BENCHSTAT) ## Install benchstat into ./bin.
$(BENCHSTAT): | $(TOOLBIN)
	$(call go-install-tool,$(BENCHSTAT),golang.org/x/perf/cmd/benchstat,$(BENCHSTAT_VERSION))

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Install kustomize into ./bin.
$(KUSTOMIZE): | $(TOOLBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

# go-install-tool installs $(2)@$(3) as $(1)-$(3) and links $(1) to it, so a
# version bump installs the new version instead of reusing the old binary.
define go-install-tool
@[ -f "$(1)-$(3)" ] || { \
set -e; \
echo "Installing $(2)@$(3)"; \
rm -f "$(1)"; \
GOBIN="$(TOOLBIN)" go install "$(2)@$(3)"; \
mv "$(TOOLBIN)/$$(basename "$(1)")" "$(1)-$(3)"; \
}; \
ln -sf "$$(realpath "$(1)-$(3)")" "$(1)"
endef
