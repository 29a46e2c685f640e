#!/usr/bin/env python3
"""Check a `trainpath step --trace` file against the run's result document.

usage: trace_check.py TRACE RESULT BUCKETS CKPT_EVERY

Prints one TAP comment line per failed property and exits 1, or prints
nothing and exits 0. The properties: the Chrome trace event format's shape (traceEvents of
metadata and complete events, displayTimeUnit, otherData with every
rank's clock offset and its uncertainty); a process per rank and the four
named threads; per rank and step one data wait, compute, exposed comm,
update and read batch, each bucket's allreduce once, a checkpoint where
one was due and its write on the writer's thread when asynchronous; the training thread's spans in order without
overlap; every train span's duration equal to the result document's series
for that step and rank (the same clock readings); and each bucket's
allreduce overlapping on every rank, once the clocks are aligned, within
the offsets' uncertainty (the ranks ran it together).
"""
import collections
import json
import sys

trace_path, result_path, buckets, ckpt_every = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
t = json.load(open(trace_path))
d = json.load(open(result_path))
run = d["results"]["runs"][0]
series = run["series"]
steps = len(series["step"])
nranks = len(series["step"][0])
bad = []


def need(cond, what):
    if not cond:
        bad.append(what)


ev = t.get("traceEvents")
need(isinstance(ev, list) and ev, "traceEvents: a non-empty list")
need(t.get("displayTimeUnit") == "ns", "displayTimeUnit ns")
other = t.get("otherData", {})
ranks = other.get("ranks", [])
need([x["rank"] for x in ranks] == list(range(nranks)), f"otherData.ranks: 0..{nranks - 1}")
need(all(isinstance(x["offset_ns"], int) and x["uncertainty_ns"] >= 0 for x in ranks),
     "every rank's offset_ns and uncertainty_ns >= 0")
need(other.get("dropped_events") == 0, "no event dropped")
need(all(e.get("ph") in ("M", "X") for e in ev), "only metadata (M) and complete (X) events")
meta = {(e["pid"], e.get("tid"), e["name"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
for r in range(nranks):
    need(meta.get((r, None, "process_name"), "").startswith(f"rank {r} ("), f"rank {r}: process name")
    names = [meta.get((r, k, "thread_name")) for k in range(4)]
    need(names == ["train", "comm", "loader", "checkpoint writer"], f"rank {r}: thread names {names}")

X = [e for e in ev if e["ph"] == "X"]
need(all(e["dur"] >= 0 for e in X), "durations >= 0")
by = collections.defaultdict(list)
for e in X:
    by[(e["pid"], e["tid"], e["name"], e["args"]["step"])].append(e)

train = ["data wait", "compute", "exposed comm", "update"]
field = {"data wait": "data_wait", "compute": "compute", "exposed comm": "comm_exposed"}
for r in range(nranks):
    for s in range(steps):
        for name in train:
            need(len(by[(r, 0, name, s)]) == 1, f"rank {r} step {s}: one '{name}'")
        need(len(by[(r, 2, "read batch", s)]) == 1, f"rank {r} step {s}: one 'read batch'")
        for b in range(buckets):
            need(len(by[(r, 1, f"allreduce bucket {b}", s)]) == 1, f"rank {r} step {s}: bucket {b} once")
        due = ckpt_every and (s + 1) % ckpt_every == 0
        n = (s + 1) // ckpt_every if ckpt_every else 0
        need(len(by[(r, 0, f"checkpoint {n}", s)]) == (1 if due else 0), f"rank {r} step {s}: checkpoint span")
        wrote = due and d["config"]["ckpt_async"]  # else the training thread writes it
        need(len(by[(r, 3, f"checkpoint write {n}", s)]) == (1 if wrote else 0), f"rank {r} step {s}: checkpoint write")
        spans = [by[(r, 0, name, s)][0] for name in train if by[(r, 0, name, s)]]
        # the same clock readings: ns printed as us with 3 decimals
        for e in spans:
            if e["name"] in field:
                want = series[field[e["name"]]][s][r]
                need(abs(e["dur"] * 1000 - want) <= 2, f"rank {r} step {s} '{e['name']}': {e['dur'] * 1000:.0f} ns, series {want}")
        for a, b in zip(spans, spans[1:]):
            need(a["ts"] + a["dur"] <= b["ts"] + 0.002, f"rank {r} step {s}: '{a['name']}' ends after '{b['name']}' starts")

unc = {x["rank"]: x["uncertainty_ns"] / 1000 for x in ranks}
slack = 2 * max(unc.values()) + 1  # us
for s in range(steps):
    for b in range(buckets):
        ivs = [by[(r, 1, f"allreduce bucket {b}", s)] for r in range(nranks)]
        if not all(ivs):
            continue
        lo = max(i[0]["ts"] for i in ivs)
        hi = min(i[0]["ts"] + i[0]["dur"] for i in ivs)
        need(lo <= hi + slack, f"step {s} bucket {b}: the ranks' allreduces do not overlap ({lo - hi:.1f} us apart)")

if bad:
    for b in bad[:20]:
        print("#", b)
    sys.exit(1)
sys.exit(0)
