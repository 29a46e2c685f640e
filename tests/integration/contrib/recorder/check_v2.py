#!/usr/bin/env python3
"""Checks a workload file the recorder wrote, independently of the recorder:
the version 2 rules (docs/workload.md, "The file") read from the file alone,
and the figures the recorded job's model implies, computed here from the
model's layers, not read from the file.

usage: check_v2.py rules FILE
       check_v2.py ddp FILE STEPS RANKS DDP.json      (ddp_record.py's MLP, tests/integration/step/)
       check_v2.py fsdp FILE STEPS RANKS UNITS.json   (fsdp_mirror.py's model)
       check_v2.py v1 FILE STEPS DDP.json             (the same DDP job as version 1)

Prints one line per rule ("#   ok ..." or "#   FAIL ...: got X, want Y");
exits 1 when any fails."""
import json
import sys

KINDS = {"allreduce", "allgather", "reduce-scatter", "alltoall", "broadcast", "reduce", "send", "recv", "barrier"}
PHASES = {"forward", "backward", "optimizer", "other"}
SOURCES = {"kineto", "nccl-log", "kineto+nccl-log", "pytorch-ddp", "pytorch-fsdp"}
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int64": 8, "int32": 4, "int8": 1,
               "uint8": 1, "float8e4m3": 1, "float8e5m2": 1, "bool": 1, "int16": 2}
# the recorded jobs' models: (in, out) of each Linear layer, float32
DDP_MLP = [(64, 512), (512, 512), (512, 512), (512, 10)]
FSDP_UNITS = [(64, 129), (129, 129), (129, 7)]
WORLD = 2

failed = 0


def rule(desc, got, want=True):
    global failed
    if got == want:
        print("#   ok   %s" % desc)
    else:
        failed += 1
        print("#   FAIL %s: got %r, want %r" % (desc, got, want))


def whole(x, lo=0):
    return isinstance(x, int) and not isinstance(x, bool) and x >= lo


def linear_bytes(layers):
    return [4 * (i * o + o) for i, o in layers]


def rules(d):
    """The version 2 rules, from the file alone."""
    rule("trainpath_workload", d.get("trainpath_workload"), 2)
    rule("source is one the spec names", d.get("source") in SOURCES)
    rec, groups, layouts = d.get("recorded", {}), d.get("groups", []), d.get("layouts", [])
    idx, ranks = d.get("steps", {}).get("layout", []), d.get("ranks", [])
    nsteps = len(idx)
    rule("recorded.steps is the number of steps", rec.get("steps"), nsteps)
    rule("at least one step", nsteps > 0)
    rule("recorded.ranks names ranks[k].rank in order", rec.get("ranks"), [r.get("rank") for r in ranks])
    rule("groups: name, desc, a size and that many whole ranks",
         all(isinstance(g.get("name"), str) and isinstance(g.get("desc"), str) and whole(g.get("size"), 1)
             and len(g.get("ranks", [])) == g["size"] and all(whole(r) for r in g["ranks"]) for g in groups))
    colls = [c for lay in layouts for c in lay]
    rule("every collective's kind is one of the spec's", sorted({c.get("kind") for c in colls} - KINDS), [])
    rule("every collective's bytes a whole number (0 only for a barrier)",
         all(whole(c.get("bytes"), 0 if c.get("kind") == "barrier" else 1) for c in colls))
    rule("every dtype by trainpath's names", sorted({c.get("dtype") for c in colls} - set(DTYPE_BYTES)), [])
    rule("every group an index into groups, or -1",
         all(isinstance(c.get("group"), int) and -1 <= c["group"] < len(groups) for c in colls))
    rule("every phase one of forward/backward/optimizer/other", sorted({c.get("phase") for c in colls} - PHASES), [])
    rule("steps.layout indexes layouts", all(isinstance(i, int) and 0 <= i < len(layouts) for i in idx))
    rule("every layout is used by a step", sorted(set(idx)), list(range(len(layouts))))
    shape = [len(layouts[i]) if 0 <= i < len(layouts) else -1 for i in idx]
    for r in ranks:
        k = "ranks[rank %s]" % r.get("rank")
        for key in ("forward_ns", "backward_ns", "optimizer_ns", "step_ns"):
            if key == "step_ns" and key not in r:
                continue
            rule("%s.%s: one whole ns >= 0 per step" % (k, key),
                 len(r.get(key, [])) == nsteps and all(whole(v) for v in r[key]))
        for key in ("ready_ns", "start_ns", "duration_ns"):
            if key != "ready_ns" and key not in r:
                continue
            rule("%s.%s: per step one whole ns >= 0 per collective of its layout" % (k, key),
                 [len(s) for s in r.get(key, [])] == shape and all(whole(v) for s in r[key] for v in s))
    if len(ranks) > 1:
        sk = d.get("skew", {})
        rule("skew.offset_ns: one per rank", len(sk.get("offset_ns", [])), len(ranks))
        arrival = [[max(col) - min(col) for col in zip(*[r["ready_ns"][s] for r in ranks])] for s in range(nsteps)]
        rule("skew.arrival_ns: max - min of the ranks' ready, per collective", sk.get("arrival_ns"), arrival)
        slowest = []
        for s in range(nsteps):
            ready = [r["ready_ns"][s] for r in ranks]
            if ready[0]:  # the rank most behind the earliest over the step's collectives
                c = [sum(t - min(col) for t, col in zip(rd, zip(*ready))) for rd in ready]
            else:  # no collective: the longest compute
                c = [r["forward_ns"][s] + r["backward_ns"][s] for r in ranks]
            slowest.append(ranks[c.index(max(c))]["rank"])
        rule("skew.slowest_rank: the rank most behind over the step's collectives, per step",
             sk.get("slowest_rank"), slowest)
    else:
        rule("no skew with one rank", "skew" in d, False)
    params = d.get("model", {}).get("parameters", [])
    ok = True
    for p in params:
        n = 1
        for x in p.get("shape", []):
            n *= x
        ok = ok and p.get("bytes") == n * DTYPE_BYTES.get(p.get("dtype"), -1)
    rule("each parameter's bytes: its shape's elements x its dtype's size", ok)
    rule("model.parameter_bytes is the parameters' sum", d.get("model", {}).get("parameter_bytes"),
         sum(p.get("bytes", 0) for p in params))
    b = d.get("batch", {})
    rule("batch: whole samples_per_rank and sample_bytes",
         whole(b.get("samples_per_rank"), 1) and whole(b.get("sample_bytes"), 4))
    rule("checkpoint.bytes a whole number", whole(d.get("checkpoint", {}).get("bytes")))
    for r in ranks:
        order = all(all(a <= b for a, b in zip(s, s[1:])) for s in r["ready_ns"])
        rule("rank %s: collectives in call order (ready never decreases in a step)" % r["rank"], order)
        inside = True
        for s, i in enumerate(idx):
            f, bw = r["forward_ns"][s], r["backward_ns"][s]
            for c, t in zip(layouts[i], r["ready_ns"][s]):
                if c["phase"] == "forward":
                    inside = inside and t <= f
                if c["phase"] == "backward":
                    inside = inside and f <= t <= f + bw
        rule("rank %s: a forward call within the forward, a backward one within the backward" % r["rank"], inside)


def common(d, steps, nranks):
    rule("the first step skipped: recorded steps", d["recorded"]["steps"], steps - 1)
    rule("ranks in the file", [r["rank"] for r in d["ranks"]], list(range(nranks)))
    rule("one layout: the same collectives every step", len(d["layouts"]), 1)
    rule("the process group: two ranks, 0 and 1", [(g["size"], g["ranks"]) for g in d["groups"]], [(2, [0, 1])])
    rule("durations recorded (gloo: sync returns and futures)", all("duration_ns" in r for r in d["ranks"]), True)


def ddp(d, steps, nranks, own):
    grads = linear_bytes(DDP_MLP)
    lay = d["layouts"][0]
    rule("source", d["source"], "pytorch-ddp")
    common(d, steps, nranks)
    rule("DDP's buckets: allreduces of float32 in the backward, over group 0",
         {(c["kind"], c["dtype"], c["phase"], c["group"]) for c in lay}, {("allreduce", "float32", "backward", 0)})
    rule("the buckets' bytes add up to the model's gradient bytes (from its layers)",
         sum(c["bytes"] for c in lay), sum(grads))
    rule("the buckets are DDP's own (its rebuilt bucket sizes, in firing order)",
         [c["bytes"] for c in lay], own["bucket_sizes"])
    rule("bucket i fired i-th", [c.get("bucket") for c in lay], list(range(len(lay))))
    names = sorted(n for c in lay for n in c.get("parameters", []))
    want = sorted("%d.%s" % (2 * i, w) for i in range(len(DDP_MLP)) for w in ("weight", "bias"))
    rule("the buckets hold every parameter once", names, want)
    rule("the last layer's bucket fires first", "6.weight" in lay[0]["parameters"], True)
    rule("model.parameter_bytes: the model's (from its layers), and DDP's total",
         [d["model"]["parameter_bytes"], own["total_parameter_size_bytes"]], [sum(grads)] * 2)
    rule("the checkpoint: the weights and Adam's two moments, at least 3x", d["checkpoint"]["bytes"] >= 3 * sum(grads))
    rule("an LR scheduler made after the recorder still counted every optimizer step",
         own["scheduler_steps"], steps)
    rule("the batch", d["batch"], {"samples_per_rank": 32, "sample_bytes": 264})
    rule("torch's collectives and autograd.backward put back after the recorded steps", own["restored"], True)


def fsdp(d, steps, nranks, own):
    padded = [-(-(i * o + o) // WORLD) * WORLD for i, o in FSDP_UNITS]
    flat = [4 * p for p in padded]
    lay = d["layouts"][0]
    rule("source", d["source"], "pytorch-fsdp")
    common(d, steps, nranks)
    rule("each unit's flat parameter as the job made it (numel, padded to the world size)",
         [(u["numel"], u["padded"]) for u in own["units"]], [(i * o + o, p) for (i, o), p in zip(FSDP_UNITS, padded)])
    want = [("allgather", b, "forward") for b in flat]
    for b in reversed(flat):
        want += [("allgather", b, "backward"), ("reduce-scatter", b, "backward")]
    rule("FULL_SHARD's collectives: each unit's all-gather in the forward, then per unit from the last "
         "its all-gather and its gradient's reduce-scatter in the backward, bytes = its padded flat parameter",
         [(c["kind"], c["bytes"], c["phase"]) for c in lay], want)
    rule("float32, over group 0", {(c["dtype"], c["group"]) for c in lay}, {("float32", 0)})
    ps = d["model"]["parameters"]
    rule("the original parameters read back from the flat ones (names, shapes)",
         [(p["name"], p["shape"]) for p in ps],
         [(n, s) for k, (i, o) in enumerate(FSDP_UNITS)
          for n, s in (("net.%d.weight" % (2 * k), [o, i]), ("net.%d.bias" % (2 * k), [o]))])
    rule("model.parameter_bytes: the model's, unpadded", d["model"]["parameter_bytes"],
         sum(linear_bytes(FSDP_UNITS)))
    # Adam's two moments of every rank's shard (padded), and a step counter
    # per shard (a float32 tensor in torch 1.13 and 2.x) on each rank
    ck = d["checkpoint"]["bytes"] - sum(linear_bytes(FSDP_UNITS)) - 2 * sum(flat)
    rule("the checkpoint: the parameters and Adam's moments summed over the ranks' shards", 0 <= ck <= 64, True)
    rule("the ranks trained the same model", own["checksums"][0], own["checksums"][1])


def v1(d, steps, own):
    rule("trainpath_workload", d.get("trainpath_workload"), 1)
    rule("the buckets, DDP's own", [b["bytes"] for b in d["buckets"]], own["bucket_sizes"])
    n = steps - 1
    rule("every bucket's ready_ns and allreduce_ns: one per recorded step",
         all(len(b["ready_ns"]) == n and len(b["allreduce_ns"]) == n for b in d["buckets"]), True)
    rule("steps: forward, backward, optimizer, step, one per recorded step",
         [len(v) for v in d["steps"].values()], [n] * 4)
    bw = d["steps"]["backward_ns"]
    rule("each bucket ready within the backward (ns from the forward's end)",
         all(0 <= b["ready_ns"][s] <= bw[s] for b in d["buckets"] for s in range(n)), True)


def main(argv):
    if len(argv) < 2 or argv[0] not in ("rules", "ddp", "fsdp", "v1"):
        sys.exit(__doc__.split("usage: ")[1].split("\n\n")[0])
    d = json.load(open(argv[1]))
    if argv[0] == "rules":
        rules(d)
    elif argv[0] == "v1":
        v1(d, int(argv[2]), json.load(open(argv[3])))
    else:
        own = json.load(open(argv[4]))
        (ddp if argv[0] == "ddp" else fsdp)(d, int(argv[2]), int(argv[3]), own)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
