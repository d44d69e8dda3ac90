# Thin wrapper over CMake (as neovim's is). Every target first installs the
# missing Debian packages (scripts/packages.txt), so each works on a fresh
# Debian 12 machine as root.
BUILD   ?= build
ASAN    ?= build-asan
FUZZ    ?= build-fuzz
JOBS    ?= $(shell nproc)
PREFIX  ?= /usr/local
FUZZ_RUNS ?= 20000

.PHONY: all deps build asan fuzz-build test unit-test asan-test fuzz-test \
	fuzz demo bench stress install clean

all: build

deps:
	@sh scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCORRAL_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

asan: deps
	@cmake -S . -B $(ASAN) -DCORRAL_WERROR=ON -DCORRAL_SANITIZE=ON \
		-DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build $(ASAN) -j $(JOBS)

fuzz-build: deps
	@CC=clang cmake -S . -B $(FUZZ) -DCORRAL_FUZZ=ON -DCORRAL_TESTS=OFF \
		-DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build $(FUZZ) -j $(JOBS) --target fuzz-all

unit-test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan-test: asan
	@cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j $(JOBS) -E '^e2e/'

fuzz-test: fuzz-build
	@sh scripts/fuzz.sh $(FUZZ) $(FUZZ_RUNS)

# Everything: the suites, the same suites under ASan+UBSan, and the fuzz
# targets for a fixed number of runs on the committed corpus.
test: unit-test asan-test fuzz-test
	@echo "make test: all passed"

fuzz: fuzz-build
	@sh scripts/fuzz.sh $(FUZZ) 2000000

demo: build
	@$(BUILD)/tui/corral demo

bench: build
	@sh bench/run.sh $(BUILD)

# At least 50 random SIGKILLs of console and holders, then reconciliation
# (issue 5); prints the figures.
stress: build
	@cd $(BUILD) && CK_RUN_SUITE=stress CORRAL_STRESS=60 ./tests/test_lease

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	@rm -rf $(BUILD) $(ASAN) $(FUZZ)
