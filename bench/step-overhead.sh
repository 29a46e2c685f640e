#!/usr/bin/env bash
# trainpath step, measured on itself (no peer tool), in one run:
#   1. the harness's own cost per step: zero compute, a 16 B gradient in one
#      bucket, 64 B samples generated in memory (--no-io), 2000 steps, at 1
#      and 2 ranks, overlapped, --no-overlap and --reduce exact; BENCH_REPS
#      runs each (default 3), medians of the step time's mean/p50/p99 and of
#      the mean split (data_wait, compute, comm, comm_exposed, the rest);
#   2. where the time of a preset run goes: resnet50 --scale 0.1, 2 ranks,
#      60 steps, with and without overlap (and, as extras, overlap with 4
#      buckets and overlap with --reduce exact), and with a 128 MiB
#      checkpoint every 20 steps, synchronous and --ckpt-async: step
#      mean/p99, trainpath's summary fractions, goodput; exact over plain;
#   3. latency is a multiplier: a rare comm spike (20 ms with p = 0.05, drawn
#      on every rank independently) at 1, 2 and 4 ranks, 5 ms of compute:
#      the mean step time against the same run without it (same seed), which
#      should grow with the ranks as P(any rank spikes) = 1-(1-p)^N.
# Not a test: nothing here fails because a figure looks wrong; odd figures
# get a NOTE line.
#
# usage: bench/step-overhead.sh [BUILD_DIR]      # default build
#   env BENCH_REPS    runs per configuration in parts 1 and 3 (default 3)
#   env BENCH_KEEP=1  keep the scratch folder with the JSON results
set -euo pipefail
BUILD=${1:-build}
REPS=${BENCH_REPS:-3}

die() { echo "step-overhead: $*" >&2; exit 2; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPS must be a whole number >= 1 (got '$REPS')"
[[ -x $BUILD/trainpath ]] || die "no trainpath binary in '$BUILD' (pass the build folder as \$1)"
TP=$(realpath "$BUILD/trainpath")
[[ -x /usr/bin/python3 ]] || die "/usr/bin/python3 is needed to read the JSON results"

DIR=$(mktemp -d /var/tmp/tp-bench-step.XXXXXX)
cleanup() {
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then echo "# results kept in $DIR/res"; else rm -rf -- "$DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$DIR/res" "$DIR/data"

# step NAME ARGS...: trainpath step ARGS, its result in res/NAME.json; a
# failure stops the benchmark
step() {
    local name=$1
    shift
    if ! "$TP" step "$@" --dir "$DIR/data" --json "$DIR/res/$name.json" -q >"$DIR/res/$name.log" 2>&1; then
        echo "step-overhead: failed: trainpath step $* --dir $DIR/data" >&2
        tail -n 20 "$DIR/res/$name.log" >&2
        exit 1
    fi
}

NPROC=$(nproc)
echo "# $NPROC cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')); kernel $(uname -r); trainpath $("$TP" --version | awk '{print $NF}')"
echo "# scratch $DIR ($(stat -f -c %T "$DIR")); load $(cut -d' ' -f1-4 /proc/loadavg)"
start=$SECONDS

# 1. the harness's own cost: configurations alternate within each repetition
harness=(--steps 2000 --compute-ms 0 --dim 1 --grad-size 16 --buckets 1 --sample-size 64 --no-io)
for ((r = 1; r <= REPS; r++)); do
    for n in 1 2; do
        step "h_n${n}_overlap_r$r" -n "$n" --batch "$n" "${harness[@]}"
        step "h_n${n}_nooverlap_r$r" -n "$n" --batch "$n" "${harness[@]}" --no-overlap
        step "h_n${n}_exact_r$r" -n "$n" --batch "$n" "${harness[@]}" --reduce exact
    done
done

# 2. a preset's time split; a 1-step run first creates the dataset, so that
#    the four measured runs read the same files in the same state
preset=(-n 2 --preset resnet50 --scale 0.1)
step p_setup "${preset[@]}" --steps 1
step p_overlap "${preset[@]}" --steps 60
step p_nooverlap "${preset[@]}" --steps 60 --no-overlap
step p_buckets4 "${preset[@]}" --steps 60 --buckets 4
step p_exact "${preset[@]}" --steps 60 --reduce exact
step p_ckpt "${preset[@]}" --steps 60 --ckpt-every 20 --ckpt-size 128M
step p_ckptasync "${preset[@]}" --steps 60 --ckpt-every 20 --ckpt-size 128M --ckpt-async

# 3. latency is a multiplier: each seed draws other spikes; the run without
#    the delay comes right before the one with it
lat=(--compute-ms 5 --steps 200 --grad-size 1M)
for ((r = 1; r <= REPS; r++)); do
    for n in 1 2 4; do
        step "l_n${n}_base_r$r" -n "$n" "${lat[@]}" --seed "$r"
        step "l_n${n}_spike_r$r" -n "$n" "${lat[@]}" --seed "$r" --inject-delay comm:spike:20ms:0.05
    done
done
echo "# $((SECONDS - start)) s of runs"

/usr/bin/python3 - "$DIR/res" "$REPS" "$NPROC" <<'PY'
import json, statistics as st, sys
d, reps, nproc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
notes = []

def load(name):
    doc = json.load(open(f"{d}/{name}.json"))
    status = doc.get("status")
    if isinstance(status, dict) and not status.get("ok", True):
        notes.append(f"{name}: result status {status.get('code')!r}: {status.get('message')}")
    return doc

def run0(doc): return doc["results"]["runs"][0]

def series_mean(run, field):
    rows = run["series"][field]
    vals = [v for per in rows for v in per]
    return sum(vals) / len(vals) if vals else 0.0

med = st.median

# ---- 1 -------------------------------------------------------------------
print("\n## 1. harness cost per step: --compute-ms 0 --dim 1 --grad-size 16 --buckets 1 "
      f"--sample-size 64 --batch N --no-io, 2000 steps, median of {reps} runs (us)")
print("step_time = per step the slowest rank; the split = mean over steps and ranks; "
      "rest = step - data_wait - compute - exposed (update, bookkeeping)")
hdr = (f"{'config':<12} {'N':>2} | {'mean':>7} {'p50':>7} {'p99':>7} | {'data_wait':>9} {'compute':>8} "
       f"{'comm':>7} {'exposed':>8} {'rest':>7} {'rank step':>9} | {'ampl':>5}")
print(hdr); print("-" * len(hdr))
for n in (1, 2):
    for cfg in ("overlap", "nooverlap", "exact"):
        runs = [run0(load(f"h_n{n}_{cfg}_r{r}")) for r in range(1, reps + 1)]
        m = {k: med(x["step_time"][k] for x in runs) / 1e3 for k in ("mean", "p50", "p99")}
        sp = {f: med(series_mean(x, f) for x in runs) / 1e3
              for f in ("data_wait", "compute", "comm", "comm_exposed", "ckpt_stall", "step")}
        # the rest per run, then its median (medians of the columns do not add up)
        rest = med((series_mean(x, "step") - sum(series_mean(x, f) for f in
                    ("data_wait", "compute", "comm_exposed", "ckpt_stall"))) / 1e3 for x in runs)
        amp = med(x["summary"]["amplification"] for x in runs)
        print(f"{cfg:<12} {n:>2} | {m['mean']:7.2f} {m['p50']:7.2f} {m['p99']:7.2f} | {sp['data_wait']:9.2f} "
              f"{sp['compute']:8.2f} {sp['comm']:7.2f} {sp['comm_exposed']:8.2f} {rest:7.2f} {sp['step']:9.2f} | {amp:5.3f}")
        for x, r in zip(runs, range(1, reps + 1)):
            if x["summary"]["amplification"] < 1 - 1e-9:
                notes.append(f"part 1 {cfg} N={n} run {r}: amplification {x['summary']['amplification']:.4f} < 1")
        if rest < -0.05 * sp["step"]:
            notes.append(f"part 1 {cfg} N={n}: the split adds up to more than the step ({rest:.2f} us left)")
        if m["p50"] > m["p99"]:
            notes.append(f"part 1 {cfg} N={n}: p50 > p99")

# ---- 2 -------------------------------------------------------------------
print("\n## 2. resnet50 --scale 0.1, 2 ranks, 60 steps: where the time goes")
setup = load("p_setup")
print(f"dataset created by the setup run: {setup['results'].get('dataset_created')}")
rows = [("overlap", "p_overlap"), ("no-overlap", "p_nooverlap"), ("overlap, 4 buckets *", "p_buckets4"),
        ("overlap, reduce exact", "p_exact"), ("ckpt 128M/20", "p_ckpt"), ("ckpt 128M/20 async", "p_ckptasync")]
hdr = (f"{'run':<21} | {'mean ms':>7} {'p99 ms':>7} | {'ampl':>5} {'exposed':>7} {'ckpt':>6} {'wait':>6} "
       f"{'compute':>7} {'sum':>6} | {'hidden':>6} | {'samples/s':>9} | {'dataset?':>8}")
print(hdr); print("-" * len(hdr))
prun = {}
for label, name in rows:
    doc = load(name)
    x = run0(doc); prun[name] = x
    s, t = x["summary"], x["step_time"]
    fr = [s["exposed_comm_fraction"], s["ckpt_overhead_fraction"], s["data_wait_fraction"], s["compute_fraction"]]
    tot = sum(fr)
    print(f"{label:<21} | {t['mean']/1e6:7.3f} {t['p99']/1e6:7.3f} | {s['amplification']:5.3f} "
          + " ".join(f"{100*f:5.1f}%" if i else f"{100*f:6.1f}%" for i, f in enumerate(fr[:3]))
          + f" {100*fr[3]:6.1f}% {100*tot:5.1f}% | {100*s['comm_hidden_fraction']:5.1f}% | {s['goodput']['value']:9.0f}"
          + f" | {str(doc['results'].get('dataset_created')):>8}")
    if tot > 1.001:
        notes.append(f"part 2 {label}: the fractions add up to {100*tot:.1f}% > 100%")
    if s["amplification"] < 1 - 1e-9:
        notes.append(f"part 2 {label}: amplification {s['amplification']:.4f} < 1")
    if doc["results"].get("dataset_created"):
        notes.append(f"part 2 {label}: this measured run created the dataset")
print("fractions of the summed per-rank step time; sum = exposed + ckpt + wait + compute "
      "(the rest is the update); hidden = share of comm time that overlapped compute;")
print("* extra row, --buckets 4: at --scale 0.1 the 10000K gradient fits in one 25 MiB bucket, which is "
      "released only after the last compute slice, so the plain overlap rows have nothing to overlap")
po, pn = prun["p_overlap"]["step_time"]["mean"], prun["p_nooverlap"]["step_time"]["mean"]
pc, pa = prun["p_ckpt"]["step_time"]["mean"], prun["p_ckptasync"]["step_time"]["mean"]
print(f"overlap / no-overlap mean step: {po/pn:.3f}; checkpoint cost per step: sync "
      f"{(pc-po)/1e6:+.3f} ms, async {(pa-po)/1e6:+.3f} ms against the overlap run")
pe = prun["p_exact"]
print(f"--reduce exact / plain (overlap) mean step: {pe['step_time']['mean']/po:.3f}; mean comm per rank and "
      f"step {series_mean(pe, 'comm')/1e6:.3f} ms against {series_mean(prun['p_overlap'], 'comm')/1e6:.3f} ms, "
      f"compute {series_mean(pe, 'compute')/1e6:.3f} ms against {series_mean(prun['p_overlap'], 'compute')/1e6:.3f} ms")
for label, name in (("overlap", "p_overlap"), ("overlap, 4 buckets", "p_buckets4")):
    x = prun[name]
    hid = series_mean(x, "comm") * x["summary"]["comm_hidden_fraction"] / 1e6
    gain = (pn - x["step_time"]["mean"]) / 1e6
    print(f"{label}: comm counted as hidden {hid:.3f} ms per rank and step; the mean step saves "
          f"{gain:.3f} ms against --no-overlap")
    if hid > 0.2 and gain < hid / 2:
        notes.append(f"part 2 {label}: {hid:.3f} ms/step of comm counted as hidden, but the mean step saves "
                     f"only {gain:.3f} ms against --no-overlap (no spare core to overlap on?)")

# ---- 3 -------------------------------------------------------------------
P, D = 0.05, 20.0
print(f"\n## 3. latency is a multiplier: --inject-delay comm:spike:20ms:0.05 on every rank, "
      f"--compute-ms 5 --steps 200 --grad-size 1M, seeds 1..{reps} (means over seeds)")
hdr = (f"{'N':>2} | {'base ms':>7} {'spiked ms':>9} {'increase':>8} {'x p*D':>6} | {'any-spike steps':>15} "
       f"{'expected':>8} {'predicted ms':>12} | {'ampl base':>9} {'spiked':>6} | {'exposed +ms':>11} {'compute +ms':>11}")
print(hdr); print("-" * len(hdr))
for n in (1, 2, 4):
    b = [run0(load(f"l_n{n}_base_r{r}")) for r in range(1, reps + 1)]
    s = [run0(load(f"l_n{n}_spike_r{r}")) for r in range(1, reps + 1)]
    bm = st.mean(x["step_time"]["mean"] for x in b) / 1e6
    sm = st.mean(x["step_time"]["mean"] for x in s) / 1e6
    inc = sm - bm
    steps = len(s[0]["series"]["delay_comm"])
    anyfrac = st.mean(sum(1 for per in x["series"]["delay_comm"] if any(v > 0 for v in per)) / len(x["series"]["delay_comm"])
                      for x in s)
    expect = 1 - (1 - P) ** n
    exp_b = st.mean(series_mean(x, "comm_exposed") for x in b) / 1e6
    exp_s = st.mean(series_mean(x, "comm_exposed") for x in s) / 1e6
    cmp_b = st.mean(series_mean(x, "compute") for x in b) / 1e6
    cmp_s = st.mean(series_mean(x, "compute") for x in s) / 1e6
    ab = st.mean(x["summary"]["amplification"] for x in b)
    asp = st.mean(x["summary"]["amplification"] for x in s)
    over = "  (oversubscribed)" if n > nproc else ""
    print(f"{n:>2} | {bm:7.3f} {sm:9.3f} {inc:+8.3f} {inc/(P*D):6.2f} | {anyfrac*steps:8.1f} / {steps:<4} "
          f"{expect*steps:8.1f} {anyfrac*D:12.3f} | {ab:9.3f} {asp:6.3f} | {exp_s-exp_b:+11.3f} {cmp_s-cmp_b:+11.3f}{over}")
    if ab < 1 - 1e-9 or asp < 1 - 1e-9:
        notes.append(f"part 3 N={n}: amplification < 1")
print(f"increase = spiked - base mean step (slowest rank per step); x p*D = increase / ({P} x {D:.0f} ms), "
      "what one rank alone would add on average, expected 1-(1-p)^N / p = "
      + ", ".join(f"{(1-(1-P)**n)/P:.2f}" for n in (1, 2, 4)) + " for N = 1, 2, 4;")
print("any-spike steps: steps in which at least one rank drew the spike (observed per run, against "
      "steps x (1-(1-p)^N)); predicted ms = that share x 20 ms;")
print("ampl = trainpath's amplification (mean over steps of the slowest rank's own step / mean own step; own = step less the wait for the last rank to be ready); exposed +ms = "
      "increase of the mean exposed comm per rank and step; compute +ms the same for the compute phase "
      "(run-to-run noise: the spike does not touch it)")
if 4 > nproc:
    print(f"N = 4 runs 4 ranks (each with a compute, a comm and a loader thread) on {nproc} cores: "
          "oversubscribed, its base time is not 5 ms of compute plus a little")

print()
for n in notes:
    print("NOTE:", n)
PY
