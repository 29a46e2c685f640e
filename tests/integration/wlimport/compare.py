#!/usr/bin/python3
"""Check a workload file (format 2) against expect.py's document.

usage: compare.py EXPECTED.json WORKLOAD_V2.json [--rank N]

EXPECTED.json is what expect.py printed for one rank's trace; WORKLOAD_V2.json
what `trainpath workload import` wrote. The rank compared is --rank N (the
entry of `ranks` whose "rank" is N), else the one whose rank is the trace's
distributedInfo rank, else ranks[0].

Kinds, bytes, dtypes, group names and the counts of steps and collectives
must be equal; times (forward_ns, backward_ns, optimizer_ns, step_ns,
ready_ns, start_ns, duration_ns) within 1 µs, for rounding. A time or size
the expectation has as null must be null or absent in the workload, and the
other way round. Each mismatch is printed with its step, collective and
field; the exit status is 1 on any, 0 when all agree.
"""
import json
import sys

TOLERANCE_NS = 1000


def main():
    args = sys.argv[1:]
    rank = None
    if "--rank" in args:
        i = args.index("--rank")
        rank = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__.split("\n\n")[0])
    exp = json.load(open(args[0]))
    wl = json.load(open(args[1]))
    bad = compare(exp, wl, rank if rank is not None else exp.get("rank"))
    for line in bad:
        print(line)
    if bad:
        print(f"{len(bad)} mismatches between {args[0]} and {args[1]}")
        return 1
    n = sum(len(s["collectives"]) for s in exp["steps"])
    print(f"ok: {len(exp['steps'])} steps, {n} collectives agree")
    return 0


def pick_rank(wl, rank):
    ranks = wl.get("ranks") or []
    for r in ranks:
        if rank is not None and r.get("rank") == rank:
            return r
    return ranks[0] if ranks else {}


def at(lst, *idx):
    """lst[i][j]..., or None where a list is absent or too short."""
    for i in idx:
        if not isinstance(lst, list) or i >= len(lst):
            return None
        lst = lst[i]
    return lst


def compare(exp, wl, rank):
    bad = []
    rec = wl.get("recorded") or {}
    if wl.get("trainpath_workload") != 2:
        bad.append(f"trainpath_workload: expected 2, workload {wl.get('trainpath_workload')}")
    for key in ("world_size", "backend"):
        if exp.get(key) is not None and rec.get(key) != exp[key]:
            bad.append(f"recorded.{key}: expected {exp[key]!r}, workload {rec.get(key)!r}")
    steps = (wl.get("steps") or {}).get("layout") or []
    if len(steps) != len(exp["steps"]):
        bad.append(f"steps: expected {len(exp['steps'])} "
                   f"({[s.get('name') for s in exp['steps']]}), workload {len(steps)}")
    layouts, groups = wl.get("layouts") or [], wl.get("groups") or []
    r = pick_rank(wl, rank)
    for s, es in enumerate(exp["steps"]):
        if s >= len(steps):
            break
        where = f"step {s} ({es.get('name')})"
        for key in ("forward_ns", "backward_ns", "optimizer_ns", "step_ns"):
            time(bad, where, key, es.get(key), at(r.get(key), s))
        lay = at(layouts, steps[s]) or []
        if len(lay) != len(es["collectives"]):
            bad.append(f"{where}: collectives: expected {len(es['collectives'])}, "
                       f"workload {len(lay)} (layout {steps[s]})")
        for i, ec in enumerate(es["collectives"]):
            if i >= len(lay):
                break
            wc, cw = lay[i], f"{where} collective {i} ({ec['kind']})"
            for key in ("kind", "bytes", "dtype"):
                if wc.get(key) != ec[key]:
                    bad.append(f"{cw}: {key}: expected {ec[key]!r}, workload {wc.get(key)!r}")
            g = wc.get("group", -1)
            gname = groups[g].get("name") if isinstance(g, int) and 0 <= g < len(groups) else None
            if gname != ec["group_name"]:
                bad.append(f"{cw}: group: expected {ec['group_name']!r}, workload {gname!r} "
                           f"(groups[{g}])")
            for key in ("ready_ns", "start_ns", "duration_ns"):
                time(bad, cw, key, ec[key], at(r.get(key), s, i))
    return bad


def time(bad, where, key, want, got):
    if want is None and got is None:
        return
    if want is None or got is None or not isinstance(got, int) \
            or abs(got - want) > TOLERANCE_NS:
        bad.append(f"{where}: {key}: expected {want}, workload {got}")


if __name__ == "__main__":
    sys.exit(main())
