#!/usr/bin/env bash
# The GPU path on a machine with a GPU, in one go. Not yet timed on a GPU:
# every run has its own limit and the whole script a budget (GPU_CHECK_BUDGET,
# default 450 s), so it ends within 8 minutes whatever hangs; a run the
# budget cannot hold is skipped and says so.
#   1. test_gpu: the device opens; memory round-trips through it; NCCL's codes
#   2. coll allreduce, f32, 8 B..1 GiB: NCCL (--backend nccl, one rank per
#      GPU) beside trainpath from GPU memory (--mem cuda: staged through host
#      memory) and trainpath from host memory; #wrong of each (bit-exact)
#   3. the same NCCL allreduce timed by PyTorch (torch.distributed, the peer
#      tool on these machines), at 64 MiB and 1 GiB: ratio trainpath / torch
#   4. step --compute gpu: cuBLAS bf16 products sized by --compute-ms, the
#      gradient on the GPU, synchronised by NCCL and by trainpath (staged);
#      --verify-repro 2; and the product's FLOP/s beside torch.matmul's
#   5. net lat and bw --mem cuda on loopback: kernel TCP (staged) and
#      libfabric shm (FI_HMEM: the provider moves GPU memory itself)
# then prints one table. Every run writes its JSON into $OUT (the device
# tool's output folder), packed into $OUT/gpu-check.tgz with the table.
#
# usage: bench/gpu-check.sh [TRAINPATH]
#   TRAINPATH  a binary with the GPU path; default: .gpu/trainpath (made here
#              by bench/gpu-bundle.sh and carried), else build-gpu/trainpath
#              (built now with -Dgpu=enabled when meson and the libraries
#              are there)
# Without a GPU it says so and runs only the host reference (exit 0): the
# table's GPU columns are then empty.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d /tmp/gpu-check.XXXXXX)}
mkdir -p "$OUT/runs"
R=$OUT/runs
log() { echo "gpu-check: $*" >&2; }

# ---- the binary and the libraries it loads ----
TP=${1:-}
LIBS=()
if [ -z "$TP" ] && [ -x .gpu/trainpath ]; then
    TP=.gpu/trainpath
    LIBS+=("$PWD/.gpu/lib")
fi
if [ -z "$TP" ]; then
    if [ ! -x build-gpu/trainpath ] && command -v meson >/dev/null; then
        meson setup build-gpu --buildtype=release -Dgpu=enabled >/dev/null 2>&1 &&
            ninja -C build-gpu trainpath tests/test_gpu >/dev/null 2>&1
    fi
    TP=build-gpu/trainpath
fi
[ -x "$TP" ] || { log "no trainpath binary (run bench/gpu-bundle.sh where it builds)"; exit 2; }
TP=$(realpath "$TP")
TEST_GPU=$(dirname "$TP")/test_gpu
[ -x "$TEST_GPU" ] || TEST_GPU=$(dirname "$TP")/tests/test_gpu
# CUDA's libraries: the toolkit's, or the ones Python's wheels bring
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/nvidia/lib64; do
    [ -d "$d" ] && LIBS+=("$d")
done
PY=$(command -v python3 || true)
if [ -n "$PY" ]; then
    while read -r d; do LIBS+=("$d"); done < <("$PY" - <<'EOF' 2>/dev/null
import glob, os, site
for base in site.getsitepackages():
    for d in sorted(glob.glob(os.path.join(base, "nvidia", "*", "lib"))):
        print(d)
EOF
)
fi
export LD_LIBRARY_PATH=$(IFS=:; echo "${LIBS[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$TP" --version | tee "$R/version.txt" >&2

NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
NGPU=${NGPU:-0}
nvidia-smi -L >"$R/gpus.txt" 2>&1 || true
HAVE=0
if [ "$NGPU" -gt 0 ] && "$TP" coll -n 1 --mem cuda --sizes 8 --iters 1 -q >"$R/probe.txt" 2>&1; then
    HAVE=1
else
    if [ "$NGPU" -eq 0 ]; then
        log "no usable GPU: nvidia-smi lists none (host reference only)"
    else
        log "no usable GPU: $(tail -1 "$R/probe.txt") (host reference only)"
    fi
fi
# NCCL takes one rank per GPU; trainpath's staged path may share one
NR=$((NGPU > 0 ? NGPU : 1))
SIZES=8-1G
STEP=(--no-io --steps 30 --grad-size 256M --buckets 8 --compute-ms 40 --verify-repro 2 --dir "$R" -q)

BUDGET=${GPU_CHECK_BUDGET:-450}
left() { echo $((BUDGET - SECONDS)); }
run() { # run NAME SECONDS ARGS...: one trainpath run, its JSON in $R/NAME.json
    local name=$1 secs=$2; shift 2
    local t0=$SECONDS
    [ "$(left)" -lt "$secs" ] && secs=$(left)
    if [ "$secs" -lt 15 ]; then
        log "$name: skipped, the ${BUDGET} s budget is spent"
        return 0
    fi
    timeout -k 5 "$secs" "$TP" "$@" --json "$R/$name.json" >"$R/$name.log" 2>&1
    local rc=$?
    log "$name: exit $rc in $((SECONDS - t0)) s"
    [ $rc -eq 0 ] || tail -3 "$R/$name.log" | sed 's/^/    /' >&2
    return 0
}

if [ "$HAVE" = 1 ]; then
    [ -x "$TEST_GPU" ] && { timeout 60 "$TEST_GPU" >"$R/test_gpu.txt" 2>&1; log "test_gpu: exit $?"; }
    run coll-nccl 120 coll -n "$NR" --backend nccl --sizes "$SIZES" -q
    run coll-staged 150 coll -n 2 --mem cuda --sizes 8-256M -q
    # with a GPU per rank, both in one run, compared per size by trainpath itself
    [ "$NR" -ge 2 ] && run coll-both 240 coll -n "$NR" --backend trainpath,nccl --mem cuda \
        --sizes 8-256M
fi
run coll-host 150 coll -n 2 --sizes 8-256M -q
if [ "$HAVE" = 1 ]; then
    run step-gpu-nccl 120 step -n "$NR" --compute gpu --backend nccl "${STEP[@]}"
    run step-gpu-staged 120 step -n 2 --compute gpu "${STEP[@]}"
fi
run step-cpu 120 step -n 2 "${STEP[@]}"

# ---- net: both ends on this host ----
SRV_LOG=$R/serve.log
"$TP" net serve --bind 127.0.0.1 --port 0 >"$SRV_LOG" 2>&1 &
SRV=$!
PORT=""
for _ in $(seq 50); do
    PORT=$(sed -n 's/.*listening on .* port \([0-9]*\).*/\1/p' "$SRV_LOG" | head -1)
    [ -n "$PORT" ] && break
    sleep 0.1
done
if [ -n "$PORT" ]; then
    NET=(127.0.0.1 --port "$PORT" -T 300ms --warmup-time 50ms)
    run net-lat-host 60 net lat "${NET[@]}" -s 8,64K,1M
    run net-bw-host 60 net bw "${NET[@]}" -s 1M
    if [ "$HAVE" = 1 ]; then
        run net-lat-cuda-tcp 60 net lat "${NET[@]}" -s 8,64K,1M --mem cuda --check
        run net-bw-cuda-tcp 60 net bw "${NET[@]}" -s 1M --mem cuda
        run net-lat-cuda-shm 60 net lat "${NET[@]}" -s 8,64K,1M --mem cuda -P shm --check
        run net-bw-cuda-shm 60 net bw "${NET[@]}" -s 1M --mem cuda -P shm
    fi
fi
kill "$SRV" 2>/dev/null
wait "$SRV" 2>/dev/null

# ---- the peer: NCCL through PyTorch, and torch.matmul ----
if [ "$HAVE" = 1 ] && [ -n "$PY" ] && [ "$(left)" -ge 30 ]; then
    T=$(left); [ "$T" -gt 120 ] && T=120
    timeout -k 5 "$T" "$PY" - "$R/torch.json" <<'EOF' >"$R/torch.log" 2>&1
import json, os, sys, time
import torch, torch.distributed as dist
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("nccl", rank=0, world_size=1)
out = {"allreduce": {}, "matmul": {}}
for size in (64 << 20, 1 << 30):
    x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
    for _ in range(5):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    n, t0 = 50, time.perf_counter()
    for _ in range(n):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    out["allreduce"][str(size)] = (time.perf_counter() - t0) / n * 1e9
for side in (4096, 8192):
    a = torch.randn(side, side, dtype=torch.bfloat16, device="cuda")
    for _ in range(3):
        a @ a
    torch.cuda.synchronize()
    n, t0 = 20, time.perf_counter()
    for _ in range(n):
        a @ a
    torch.cuda.synchronize()
    out["matmul"][str(side)] = 2 * side**3 / ((time.perf_counter() - t0) / n)
dist.destroy_process_group()
json.dump(out, open(sys.argv[1], "w"))
EOF
    log "torch peer: exit $?"
fi

# ---- the table ----
"${PY:-python3}" - "$R" "$NR" <<'EOF' | tee "$OUT/table.txt"
import json, os, sys
R, nr = sys.argv[1], int(sys.argv[2])
def load(name):
    try:
        return json.load(open(os.path.join(R, name + ".json")))
    except Exception:
        return None
def sizes(doc):
    return {e["size_bytes"]: e for e in ((doc or {}).get("results") or {}).get("sizes", [])}
def status(doc):
    if doc is None:
        return "not run"
    s = doc.get("status", {})
    return "ok" if s.get("ok") else "FAILED: " + s.get("message", "?")[:70]
def gbs(e, k):
    return "%8.2f" % (e[k]["value"] / 1e9) if e else "%8s" % "-"
nccl, staged, host = load("coll-nccl"), load("coll-staged"), load("coll-host")
print("== coll allreduce f32: algbw and busbw in GB/s (NCCL: %d rank%s, one per GPU; "
      "trainpath: 2 ranks) ==" % (nr, "" if nr == 1 else "s"))
print("%10s | %8s %8s | %8s %8s | %8s %8s | %s" % ("size", "nccl alg", "bus", "tp-cuda",
      "bus", "tp-host", "bus", "p99 us nccl/tp-cuda"))
N, S, H = sizes(nccl), sizes(staged), sizes(host)
for sz in sorted(set(N) | set(S) | set(H)):
    if sz < 1024 and sz not in (8, 64, 512):
        continue
    n, s, h = N.get(sz), S.get(sz), H.get(sz)
    p99 = "/".join("%.1f" % (x["time"]["p99"] / 1e3) if x else "-" for x in (n, s))
    print("%10d | %s %s | %s %s | %s %s | %s" % (sz, gbs(n, "algbw"), gbs(n, "busbw"),
          gbs(s, "algbw"), gbs(s, "busbw"), gbs(h, "algbw"), gbs(h, "busbw"), p99))
wrong = {k: sum(e["wrong"] for e in sizes(d).values()) if d else None
         for k, d in (("nccl", nccl), ("tp-cuda", staged), ("tp-host", host))}
print("#wrong (bit-exact check): %s" % ", ".join("%s %s" % (k, "-" if v is None else v)
                                                  for k, v in wrong.items()))
for k, d in (("coll-nccl", nccl), ("coll-staged", staged), ("coll-host", host)):
    paths = ((d or {}).get("results") or {}).get("data_path") or [{}]
    print("  %-12s %s%s" % (k, status(d), "" if not d else "  path: " + paths[0].get("path", "?")))
torch = load("torch")
if torch and N:
    print("== NCCL through trainpath vs through PyTorch (1 rank): mean time ==")
    for sz, ns in sorted((int(k), v) for k, v in torch["allreduce"].items()):
        e = N.get(sz)
        if e:
            print("  %6d MiB: trainpath %.1f us, torch %.1f us, ratio %.2f" %
                  (sz >> 20, e["time"]["mean"] / 1e3, ns / 1e3, e["time"]["mean"] / ns))
print("== step: mean per step and rank, ms (30 steps, 256 MiB gradient in 8 buckets, "
      "compute 40 ms) ==")
print("%-16s %8s %8s %8s %8s %8s %7s  %s" % ("run", "step", "compute", "comm", "exposed",
      "p99", "ampl", "repro"))
for name in ("step-gpu-nccl", "step-gpu-staged", "step-cpu"):
    d = load(name)
    if not d or not d.get("status", {}).get("ok"):
        print("%-16s %s" % (name, status(d)))
        continue
    r = d["results"]
    run0 = r["runs"][0]
    ser = run0["series"]
    def mean(k):
        v = [x for per in ser[k] for x in per]
        return sum(v) / len(v) / 1e6 if v else 0
    print("%-16s %8.2f %8.2f %8.2f %8.2f %8.2f %7.3f  %s" % (name, mean("step"), mean("compute"),
          mean("comm"), mean("comm_exposed"), run0["step_time"]["p99"] / 1e6,
          run0["summary"]["amplification"], r["reproducibility"]["verdict"]))
    g = (r.get("calibration") or {}).get("gpu")
    if g:
        line = "    GEMM %d x %d bf16: %.0f us each, %d per step, %.0f TFLOP/s" % (
            g["gemm_side"], g["gemm_side"], g["gemm_time"]["value"] / 1e3,
            g["products_per_step"], g["throughput"]["value"] / 1e12)
        if torch and str(g["gemm_side"]) in torch["matmul"]:
            t = torch["matmul"][str(g["gemm_side"])]
            line += " (torch.matmul %.0f TFLOP/s, ratio %.2f)" % (t / 1e12,
                                                                  g["throughput"]["value"] / t)
        print(line)
print("== net on loopback ==")
for name in ("net-lat-host", "net-lat-cuda-tcp", "net-lat-cuda-shm", "net-bw-host",
             "net-bw-cuda-tcp", "net-bw-cuda-shm"):
    d = load(name)
    if not d or not d.get("status", {}).get("ok"):
        print("  %-17s %s" % (name, status(d)))
        continue
    path = (d.get("provenance", {}).get("transport") or {}).get("mem_path", "host")
    vals = []
    for e in d["results"].get("sizes", []):
        if "latency" in e:
            vals.append("%d B p50 %.1f us" % (e["size_bytes"], e["latency"]["p50"] / 1e3))
        elif "bw" in e:
            vals.append("%d B %.2f GB/s" % (e["size_bytes"], e["bw"]["value"] / 1e9))
    print("  %-17s %s  [%s]" % (name, "; ".join(vals), path))
EOF
tar -czf "$OUT/gpu-check.tgz" -C "$OUT" runs table.txt 2>/dev/null
log "documents and table in $OUT"
