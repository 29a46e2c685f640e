#!/usr/bin/env bash
# Install every Debian 12 package that trainpath's build, tests and benchmarks
# need. Idempotent: packages already present are left alone, and apt-get is
# not touched at all when nothing is missing. Run as root (or with sudo).
set -euo pipefail

# build
pkgs=(build-essential gcc make pkg-config meson ninja-build git)
# libraries (docs/architecture.md, "Dependencies")
pkgs+=(libfabric-dev libfabric-bin libsodium-dev libjansson-dev)
# storage: io_uring, block-device signatures, checksums (xxHash: XXH3)
pkgs+=(liburing-dev libblkid-dev libxxhash-dev)
# plan and policy files (YAML with line:column errors); the nftables ruleset (check facts)
pkgs+=(libfyaml-dev libnftables-dev)
# results history (report, validate)
pkgs+=(libsqlite3-dev)
# workload import: torch.profiler traces of any size streamed (yajl), gzip (zlib)
pkgs+=(libyajl-dev zlib1g-dev)
# workload import: the SHA-256 of a trace of gigabytes (libcrypto uses the CPU's SHA extensions)
pkgs+=(libssl-dev)
# launch at scale: Open MPI (the boot layer's mpi backend; mpirun in tests)
pkgs+=(libopenmpi-dev openmpi-bin)
# Slurm on localhost for the srun tests (the tests start the daemons)
pkgs+=(slurmd slurmctld slurm-client munge)
# tests: unit tests, schema validation, network namespaces
pkgs+=(libcmocka-dev python3 python3-jsonschema iproute2 nftables procps util-linux e2fsprogs strace)
# tests: the HTML report rendered headless (screenshot, DOM) by report_html.sh
pkgs+=(chromium)
# tests: a real PyTorch DDP job (CPU, gloo) recorded by contrib/pytorch and
# replayed by step --workload (step_workload.sh)
pkgs+=(python3-torch)
# hardening: libFuzzer harnesses (clang and its runtime), a FUSE filesystem
# that fails on demand (checkpoint faults)
pkgs+=(clang libclang-rt-14-dev libfuse3-dev fuse3)
# the Debian package (make deb, tests/integration/package/deb.sh)
pkgs+=(dpkg-dev debhelper lintian)
# tests: contrib/'s manifests read as YAML, the alert rules checked and
# unit-tested by promtool (Debian ships it in prometheus), the textfiles
# read by the real node_exporter (tests/integration/contrib/). On a host
# with systemd, apt starts both services (ports 9090, 9100); the tests
# start their own: `systemctl disable --now prometheus
# prometheus-node-exporter` where they are not wanted
pkgs+=(python3-yaml prometheus prometheus-node-exporter)
# the man pages, made from --help by help2man (docs/man/); tests: they
# render (man-db, groff), and the shell completion in a real bash and zsh
# on a terminal (tmux) with bash-completion's helpers (tests/integration/doc/)
pkgs+=(help2man man-db groff-base bash-completion tmux zsh)
# benchmarks: the peer tools trainpath is compared against
pkgs+=(sockperf qperf iperf3 fio)

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#pkgs[@]} packages present"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
