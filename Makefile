# Thin wrapper over Meson + Ninja. `make demo` and `make check` work on a
# fresh Debian 12 machine as root: both install what is missing first.
BUILD ?= build
ASAN ?= build-asan
FUZZ ?= build-fuzz

.PHONY: all deps build demo check bench clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD) --buildtype=debugoptimized
	@ninja -C $(BUILD)

demo: build
	@scripts/demo.sh $(BUILD)/trainpath

check: deps
	@scripts/check.sh $(BUILD) $(ASAN) $(FUZZ)

bench: build
	@bench/net-vs-peers.sh $(BUILD)/trainpath
	@bench/coll-vs-mpi.sh $(BUILD)
	@bench/io-vs-fio.sh $(BUILD)
	@bench/step-overhead.sh $(BUILD)
	@bench/plan-speed.sh $(BUILD)
	@$(BUILD)/exact_sum

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZ)
