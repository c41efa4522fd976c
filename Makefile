# EffectivePolicy API server. `make demo` and `make test` are the two entry
# points; everything they need is installed by the scripts under hack/.
SHELL := /usr/bin/env bash
GO ?= go
BIN := bin/effectivepolicy-apiserver
PLUGIN := bin/kubectl-effectivepolicy

.PHONY: all build image release codegen verify vet fmt lint test test-unit test-fuzz test-differential test-differential-long test-e2e test-long test-flakes demo local-up local-down bench clean

all: build

# The server and the kubectl plugin (docs/plugin.md); the plugin embeds the page of its ui
# command, built from web/ by hack/build-ui.sh (a no-op while web/ is unchanged; docs/ui.md).
build:
	hack/build-ui.sh
	$(GO) build -ldflags "$$(hack/ldflags.sh)" -o $(BIN) ./cmd/effectivepolicy-apiserver
	$(GO) build -ldflags "$$(hack/ldflags.sh)" -o $(PLUGIN) ./cmd/kubectl-effectivepolicy

# The container image as a docker-archive tarball, bin/effectivepolicy-apiserver-image.tar, built
# without a container engine or registry (hack/image.sh; `docker load -i` / `podman load -i`).
image:
	hack/image.sh

# Static binaries of every command for linux and darwin, amd64 and arm64, with SHA256SUMS, in dist/.
release:
	hack/release.sh

codegen:
	hack/update-codegen.sh

verify:
	hack/verify.sh

# Unit and in-process integration tests of the product module, under the race detector (the
# live layer, the stores and the engine are concurrent).
test-unit:
	$(GO) test -race -count=1 ./...

# golangci-lint with .golangci.yml (hack/lint.sh builds the pinned version once and caches it).
lint:
	hack/lint.sh

# Bounded fuzzing of the computation (SPEC.md §6: nothing can crash it).
test-fuzz:
	hack/fuzz.sh

# End-to-end tests against a real kube-apiserver, etcd and kubectl.
test-e2e: build image
	hack/e2e.sh

# Our answers against the implementations' own code on random topologies (test/differential,
# docs/differential.md): a fixed set of seeds, under a minute once hack/egctl.sh has built and
# cached Envoy Gateway's egctl and the Kuadrant oracle its kuadrant-operator binary (minutes, once).
# The timeout is go test's 10 minutes raised: on a machine shared with other work egctl alone has
# taken that long for the 40 seeds.
test-differential:
	hack/egctl.sh >/dev/null
	cd test/differential && GOWORK=off $(GO) test -count=1 -timeout 30m ./...

test: verify test-unit test-fuzz test-differential test-e2e

test-differential-long:
	hack/egctl.sh >/dev/null
	cd test/differential && GOWORK=off DIFF_BUDGET=$(LONG_DIFF_BUDGET) $(GO) test -tags long -count=1 -timeout 30m -run 'TestLongAgree|TestLongKnownCases' ./all

# The long tests of issue #8, after `make test` in CI (.ci/run): the end-to-end tests tagged
# `e2e && long` and named TestLong* (load, faults) on a fresh local control plane, then every
# fuzz target for LONG_FUZZTIME each. 5½ minutes with a warm control-plane cache, before the
# fault tests.
LONG_FUZZTIME ?= 60s
# Differential seeds beyond make test's (test/differential, docs/differential.md), no new batch of
# 20 started after LONG_DIFF_BUDGET (so at most ~11 minutes of test-long's time, CI having 90 on 2
# cores): `make test-differential-long`. It fails only on disagreements of no class
# docs/differential.md explains (test/differential/known.go).
LONG_DIFF_BUDGET ?= 10m
test-long: build
	E2E_TAGS=e2e,long E2E_RUN='^TestLong' hack/e2e.sh
	FUZZTIME=$(LONG_FUZZTIME) hack/fuzz.sh
	# Kuadrant's own effective-policy code (a test binary built once from kuadrant-operator v1.5.2
	# and cached) against the engine on every Kuadrant case, and against Kuadrant's own tests.
	cd test/differential/oracles/kuadrant && GOWORK=off $(GO) test -count=1 -timeout 30m ./...
	# kgateway's own translator (a test binary built once from kgateway v2.2.0 and cached: 15 minutes
	# cold on 2 busy cores) against its golden outputs; test-differential-long judges it on random seeds.
	cd test/differential/oracles/kgateway && GOWORK=off $(GO) test -count=1 -timeout 60m ./...
	# Differential seeds beyond make test's, within LONG_DIFF_BUDGET.
	$(MAKE) test-differential-long

# The end-to-end suite five times on a busy machine (docs/reliability.md): in a row against busy
# workers, or FLAKE_AT_ONCE side by side in fresh clones, each the others' load;
# FLAKE_TARGET=test runs the whole suite, FLAKE_RUNS and FLAKE_LOAD_PER_CORE set the rest.
test-flakes:
	hack/test-flakes.sh

local-up: build
	hack/local-up.sh

local-down:
	hack/local-down.sh

demo: build
	hack/demo.sh

# In-process benchmarks at the large size of issue #7 (docs/benchmarks/).
bench: ; hack/bench.sh

clean: local-down
	rm -rf bin .local
