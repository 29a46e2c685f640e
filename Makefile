# Thin wrapper over Meson + Ninja. `make demo` and `make check` work on a
# fresh Debian 12 machine as root: both install what is missing first.
# `make build` does not install anything and needs no root: it expects the
# packages of scripts/install-deps.sh (`make deps`, as root) to be there.
BUILD ?= build
ASAN ?= build-asan
FUZZ ?= build-fuzz

.PHONY: all deps build demo check bench deb clean

all: build

deps:
	@scripts/install-deps.sh

build:
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD) --buildtype=debugoptimized || \
	    { echo "make build: meson setup failed; the packages it needs come from scripts/install-deps.sh (as root: make deps)" >&2; exit 1; }
	@ninja -C $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo.sh $(BUILD)/trainpath

check: deps
	@scripts/check.sh $(BUILD) $(ASAN) $(FUZZ)

bench: deps
	@$(MAKE) --no-print-directory build
	@bench/net-vs-peers.sh $(BUILD)/trainpath
	@bench/coll-vs-mpi.sh $(BUILD)
	@bench/io-vs-fio.sh $(BUILD)
	@bench/step-overhead.sh $(BUILD)
	@bench/step-vs-pytorch.sh $(BUILD)
	@bench/plan-speed.sh $(BUILD)
	@$(BUILD)/exact_sum

# the Debian package into dist/ (scripts/make-deb.sh, docs/install.md): no
# root needed; the packages it needs come from scripts/install-deps.sh
deb:
	@scripts/make-deb.sh dist build-deb

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZ) build-deb
