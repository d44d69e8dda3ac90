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
	fuzz demo bench stress install clean fresh-check

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
# targets for a fixed number of runs on the committed corpus. Every stage
# runs even when an earlier one fails; then a check that nothing was left
# running, a summary line per stage and a closing "N passed, N failed".
test: deps
	@BUILD=$(BUILD) ASAN=$(ASAN) FUZZ=$(FUZZ) JOBS=$(JOBS) \
		FUZZ_RUNS=$(FUZZ_RUNS) bash scripts/test.sh

# The README's two commands on a brand-new Debian 12 root made with
# debootstrap (slow: downloads a root and every package; not in make test).
fresh-check:
	@bash scripts/fresh-check.sh

fuzz: fuzz-build
	@sh scripts/fuzz.sh $(FUZZ) 2000000

# DEMO_ARGS=--no-console starts the demo's agents without the console.
# As root, corral is linked into $(PREFIX)/bin (unless something else is
# there), so the commands the demo suggests work as typed.
# The build is quiet (its output in $(BUILD)/demo-build.log, shown only if
# it fails), so the first screen is corral's own lines.
demo: deps
	@cmake -S . -B $(BUILD) -DCORRAL_WERROR=ON >/dev/null
	@echo "corral: building (make build shows it; $(BUILD)/demo-build.log)"
	@cmake --build $(BUILD) -j $(JOBS) >$(BUILD)/demo-build.log 2>&1 || \
		{ cat $(BUILD)/demo-build.log; \
		  echo "make demo: the build failed (above)"; exit 1; }
	@sh scripts/link-bin.sh $(BUILD)/tui/corral $(PREFIX)/bin
	@$(BUILD)/tui/corral demo $(DEMO_ARGS)

bench: build
	@sh bench/run.sh $(BUILD)

# At least 50 random SIGKILLs of console and holders, then reconciliation
# (issue 5); then `corral apply` (fast-forward and rebase), `reject`, `gc`
# and `new` killed at every one of their state-changing syscalls, each
# followed by reconcile and the invariants (issue 16); prints the figures.
stress: build
	@cd $(BUILD) && CK_RUN_SUITE=stress CORRAL_STRESS=60 ./tests/test_lease
	@cd $(BUILD) && CK_RUN_SUITE=apply CK_RUN_CASE=Sweep CORRAL_SWEEP=all \
		CORRAL_BIN=$$PWD/tui/corral CORRAL_SRC=$(CURDIR) \
		CORRAL_FIXTURES=$$PWD/tests ./tests/test_lease
	@cd $(BUILD) && CK_RUN_SUITE=apply CK_RUN_CASE=SweepNew \
		CORRAL_SWEEP=all CORRAL_BIN=$$PWD/tui/corral \
		CORRAL_SRC=$(CURDIR) CORRAL_FIXTURES=$$PWD/tests \
		CORRAL_SBX_INIT=$$PWD/sandbox-adapters/corral-sbx-init \
		./tests/test_lease

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	@rm -rf $(BUILD) $(ASAN) $(FUZZ)
