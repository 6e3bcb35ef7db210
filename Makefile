# weir — the two commands: `make run` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test test-asan soak clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/bin/weir-server --config config/weir.yaml

test: build
	@bash scripts/test-services.sh
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan:
	$(MAKE) test BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo CMAKE_FLAGS=-DWEIR_SANITIZE=ON

# Crash soak of the real daemon (tests/soak/): CYCLES rounds of kill -9,
# SIGSTOP and kills during recovery under load; SEED=N repeats a run's faults.
CYCLES ?= 1000
soak: build
	$(BUILD_DIR)/bin/weir-soak --cycles $(CYCLES) $(if $(SEED),--seed $(SEED))

clean:
	rm -rf $(BUILD_DIR) build-asan

# libFuzzer targets (tests/fuzz/): a clang build of only what they need, in
# its own directory, then each target for SECONDS seconds (tests/fuzz/run_fuzz.sh).
.PHONY: fuzz
SECONDS ?= 60
FUZZ_BUILD_DIR ?= build-fuzz
fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD_DIR) -j 2
	@bash tests/fuzz/run_fuzz.sh $(SECONDS) $(FUZZ_BUILD_DIR)
