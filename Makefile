# weir — the two commands: `make run` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# Extra arguments for ctest in `make test` (test-asan passes an exclusion).
CTEST_FLAGS ?=

.PHONY: all deps test-deps configure build run package test test-asan test-tsan soak bench clean

all: build

# What building and running need; the test suite's servers and tools come
# with test-deps (make test, make bench).
deps:
	@bash scripts/install-deps.sh

test-deps:
	@bash scripts/install-deps.sh --test

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/bin/weir-server --config config/weir.yaml

# A Debian package of the daemon in $(BUILD_DIR)/package/ (cmake/packaging.cmake):
# sudo dpkg -i build/package/weir_*.deb
package: build
	@cd $(BUILD_DIR) && rm -rf package && cpack -G DEB | tail -1

test: test-deps build
	@bash scripts/test-services.sh
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600 $(CTEST_FLAGS)

# The tests that measure the daemon's resident memory or CPU time
# (tests/hostile_clients_test.cpp): a sanitizer changes both, so sanitizer
# runs leave them out; and the package test (a package of sanitized
# binaries is no package anyone installs). A ctest -E regex of their exact
# names.
RESOURCE_TESTS := ^(a peer that pipelines and never reads its replies cannot grow the daemon|half-sent 16 MiB frames share a bounded memory that is given back|out of file descriptors the acceptor backs off instead of spinning|the admin server forgets closed connections|cluster: out of file descriptors the cluster port backs off instead of spinning|package: make package installs with dpkg and runs as weir and takes pushes from the socket group and purges)$$

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer, but
# for RESOURCE_TESTS; every UBSan report stops its process, as an ASan report
# does (the tests and the daemons they start inherit UBSAN_OPTIONS).
# ($$(RESOURCE_TESTS) reaches the sub-make unexpanded: a command-line
# variable is expanded again there, and would lose the regex's $.)
test-asan:
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	$(MAKE) test BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo CMAKE_FLAGS=-DWEIR_SANITIZE=ON \
	  CTEST_FLAGS='-E "$$(RESOURCE_TESTS)"'

# ThreadSanitizer (build-tsan/, -DWEIR_TSAN=ON): the actor tests and the live
# tests (the real daemon, itself built with TSan, driven over its socket), but
# for RESOURCE_TESTS. Selected by the CTest labels "actor" and "live", which
# tests/CMakeLists.txt gives by Catch tag ([actor], [live]). Every report of
# the test processes and of each daemon they start goes to a file under
# build-tsan/tsan-reports/ (a daemon's stderr is a test's temporary file, and
# some tests read it); after ctest, any report there fails the run.
# tests/tsan.supp silences only what uninstrumented CAF causes.
TSAN_REPORTS = $(CURDIR)/build-tsan/tsan-reports
test-tsan:
	$(MAKE) test-deps build BUILD_DIR=build-tsan BUILD_TYPE=RelWithDebInfo CMAKE_FLAGS=-DWEIR_TSAN=ON
	@bash scripts/test-services.sh
	@rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	@cd build-tsan && status=0 && \
	  TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp:halt_on_error=0:second_deadlock_stack=1:print_suppressions=0:log_path=$(TSAN_REPORTS)/report" \
	  ctest --output-on-failure -j $(JOBS) --timeout 1800 -L '^(actor|live)$$' -E '$(RESOURCE_TESTS)' || status=1; \
	  if [ -n "$$(ls -A $(TSAN_REPORTS))" ]; then \
	    cat $(TSAN_REPORTS)/*; echo "test-tsan: ThreadSanitizer reports in $(TSAN_REPORTS)" >&2; status=1; fi; \
	  exit $$status

# Crash soak of the real daemon (tests/soak/): CYCLES rounds of kill -9,
# SIGSTOP and kills during recovery under load; SEED=N repeats a run's faults.
# Then a wide sweep of the deterministic simulation, in both wirings of the
# writer and its fsync group (make test sweeps 600 and 300), and of the
# cluster simulation: three nodes, five nodes, and long runs (make test
# sweeps 500 seeds of three nodes).
CYCLES ?= 1000
SIM_SEEDS ?= 20000
CLUSTER_SIM_SEEDS ?= 20000
soak: test-deps build
	$(BUILD_DIR)/bin/weir-soak --cycles $(CYCLES) $(if $(SEED),--seed $(SEED))
	$(BUILD_DIR)/bin/weir-sim --seeds 1..$(SIM_SEEDS) --jobs $(JOBS)
	$(BUILD_DIR)/bin/weir-sim --seeds 1..$(SIM_SEEDS) --jobs $(JOBS) --daemon-wiring
	$(BUILD_DIR)/bin/weir-cluster-sim --seeds 1..$(CLUSTER_SIM_SEEDS) --jobs $(JOBS)
	$(BUILD_DIR)/bin/weir-cluster-sim --seeds 1..$$(( $(CLUSTER_SIM_SEEDS) / 4 )) --nodes 5 --jobs $(JOBS)
	$(BUILD_DIR)/bin/weir-cluster-sim --seeds 1..$$(( $(CLUSTER_SIM_SEEDS) / 20 )) --steps 4000 --jobs $(JOBS)

# The quick benchmark suite (scripts/bench.sh): bench/results/latest.jsonl,
# the tables in docs/benchmarks.md and the chart docs/benchmarks.png.
bench: test-deps build
	@bash scripts/bench.sh

clean:
	rm -rf $(BUILD_DIR) build-asan build-tsan

# libFuzzer targets (tests/fuzz/): a clang build of only what they need, in
# its own directory, then each target for SECONDS seconds (tests/fuzz/run_fuzz.sh).
.PHONY: fuzz
SECONDS ?= 60
FUZZ_BUILD_DIR ?= build-fuzz
fuzz: test-deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD_DIR) -j 2
	@bash tests/fuzz/run_fuzz.sh $(SECONDS) $(FUZZ_BUILD_DIR)
