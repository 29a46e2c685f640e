#!/usr/bin/python3
"""What `trainpath workload import` must find in a trace or an NCCL log.

usage: expect.py TRACE.json[.gz]      the steps and collectives of one rank
       expect.py --log NCCL.log       the collective lines of an NCCL log

An independent reader, written from the specification of workload format 2
(issue 41: "A torch.profiler trace: what is read", rules 1 to 8), not from
the C importer, so that the integration test can hold the importer to it.
It prints one JSON document on stdout; compare.py checks a workload file
against it. Where the specification says nothing or real traces need more
than it says, the choice made here is written in SPEC-QUESTIONS.md (Q1,
Q2, ... in the comments below).

Times are whole ns: every timestamp is read as a decimal (json's
parse_float=Decimal, so that 13-16 digit µs values keep their ns) and
rounded to the nearest ns before any difference is taken.
"""
import gzip
import json
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

CPU_CATS = {"cpu_op", "user_annotation", None, "Operator"}  # Operator: torch 1.8 (Q1)
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation",
            "Kernel", "Memcpy", "Memset"}
KERNEL_CATS = {"kernel", "Kernel"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "hip_runtime", "Runtime"}
BACKEND_RE = re.compile(r"^(nccl|gloo|hccl):")

# torch's element type names, as record_param_comms' dtype and as Input type.
DTYPES = {
    "float": "float32", "float32": "float32", "c10::float": "float32",
    "double": "float64", "float64": "float64",
    "half": "float16", "c10::half": "float16", "float16": "float16",
    "bfloat16": "bfloat16", "c10::bfloat16": "bfloat16",
    "long": "int64", "long int": "int64", "int64": "int64", "int64_t": "int64",
    "int": "int32", "int32": "int32",
    "short": "int16", "short int": "int16",
    "char": "int8", "signed char": "int8", "int8": "int8",
    "byte": "uint8", "unsigned char": "uint8", "uint8": "uint8",
    "bool": "bool",
    "float8_e4m3fn": "float8e4m3", "c10::float8_e4m3fn": "float8e4m3",
    "float8_e5m2": "float8e5m2", "c10::float8_e5m2": "float8e5m2",
}
ELEM_BYTES = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8,
              "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1,
              "float8e4m3": 1, "float8e5m2": 1, "uint32": 4, "uint64": 8}


def ns(us):
    """A µs timestamp (int or Decimal) as whole ns, rounded to nearest."""
    return int((Decimal(us) * 1000).to_integral_value(ROUND_HALF_UP))


def kind_of(name):
    """A collective kind from an op, annotation, Collective name or kernel name."""
    n = str(name).lower()
    for pre in ("c10d::", "nccl:", "gloo:", "hccl:"):
        if n.startswith(pre):
            n = n[len(pre):]
    n = n.replace("nccldevkernel_", "").replace("ncclkernel_", "")
    if "wait" in n or "generic" in n:
        return None  # record_param_comms' "wait" is no collective (Q3); RCCL's Generic says nothing
    for pat, kind in (("allreduce|all_reduce", "allreduce"),
                      ("reduce_scatter|reducescatter", "reduce-scatter"),
                      ("allgather|all_gather", "allgather"),
                      ("alltoall|all_to_all", "alltoall"),
                      ("broadcast", "broadcast"), ("barrier", "barrier"),
                      ("sendrecv", "alltoall"),  # SendRecv kernels: alltoall (rule 3)
                      (r"^_?send", "send"), (r"^_?recv", "recv"), (r"^_?reduce", "reduce")):
        if re.search(pat, n):
            return kind
    return None


def numel(dims):
    """Elements of one tensor's dims ([8192, 64]) or of a TensorList ([[a], [b]])."""
    if not isinstance(dims, list) or not dims:
        return None
    if all(isinstance(d, int) for d in dims):
        n = 1
        for d in dims:
            n *= d
        return n
    if all(isinstance(d, list) and d and all(isinstance(x, int) for x in d) for d in dims):
        return sum(numel(d) for d in dims)
    return None


class Call:
    """One collective call: a cluster of nested comm spans on one thread."""

    def __init__(self, root):
        self.root, self.spans = root, [root]
        self.ready = ns(root["ts"])
        self.end = ns(root["ts"] + root["dur"])
        self.kernels, self.work = [], None

    def by(self, test):
        return [s for s in self.spans if test(s["name"])]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)


def arg(e, key):
    return (e.get("args") or {}).get(key)


def pid_key(p):
    return (0, p) if isinstance(p, int) else (1, str(p))


def read_trace(path):
    doc = load(path)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    meta = {} if isinstance(doc, list) else doc
    dist = meta.get("distributedInfo") or {}
    warnings = []
    xs = [e for e in events if e.get("ph") == "X" and "ts" in e and "dur" in e
          and e.get("cat") != "python_function"]
    cpu = [e for e in xs if e.get("cat") in CPU_CATS]

    # Rule 1: the process with the most CPU ProfilerStep spans, then the lowest pid.
    steps_by_pid = {}
    for e in cpu:
        if str(e.get("name", "")).startswith("ProfilerStep#"):
            steps_by_pid.setdefault(e.get("pid"), []).append(e)
    if steps_by_pid:
        pid = sorted(steps_by_pid, key=lambda p: (-len(steps_by_pid[p]), pid_key(p)))[0]
        others = sorted((p for p in steps_by_pid if p != pid), key=pid_key)
        if others:
            warnings.append(f"several processes have steps: pid {pid} read, not {others}")
    else:  # Q5: no step anywhere: the process with the most CPU events
        count = {}
        for e in cpu:
            count[e.get("pid")] = count.get(e.get("pid"), 0) + 1
        pid = sorted(count, key=lambda p: (-count[p], pid_key(p)))[0] if count else None
    mine = [e for e in cpu if e.get("pid") == pid]
    windows = step_windows(mine, steps_by_pid.get(pid, []), warnings)

    calls = find_calls(mine)
    link_work(calls, xs, pid, mine, warnings)
    nokind = [c for c in calls if c.kind is None]
    if nokind:  # Q3: torch 1.13's waits are unnamed record_param_comms
        warnings.append(f"{len(nokind)} comm spans that name no collective "
                        f"(record_param_comms waits) left out")
    calls = [c for c in calls if c.kind is not None]
    world = dist.get("world_size")
    groups = {str(g.get("pg_name")): g for g in dist.get("pg_config") or []}
    step_of = {i: [c for c in calls if w["lo"] <= c.ready <= w["hi"]]
               for i, w in enumerate(windows)}
    outside = len(calls) - sum(len(v) for v in step_of.values())
    if outside:
        warnings.append(f"{outside} collective calls outside every step left out")
    keep = cut_off(windows, step_of, warnings)
    out_steps = []
    for i, w in enumerate(windows):
        if i not in keep:
            continue
        colls = []
        for c in sorted(step_of[i], key=lambda c: (c.ready, str(c.root.get("tid")))):
            colls.append(describe(c, w["origin"], world, groups))
        out_steps.append({"name": w["name"], "origin_ns": w["origin"], "forward_ns": w["forward_ns"],
                          "backward_ns": w["backward_ns"], "optimizer_ns": w["optimizer_ns"],
                          "step_ns": w["step_ns"], "collectives": colls})
    layouts = {json.dumps([(c["kind"], c["bytes"], c["dtype"], c["group_name"])
                           for c in s["collectives"]]) for s in out_steps}
    if len(layouts) > 1:
        warnings.append(f"steps differ in their collectives: {len(layouts)} layouts")
    backend = dist.get("backend") or backend_from_names(calls)
    return {"pid": pid, "rank": dist.get("rank"), "world_size": world, "backend": backend,
            "steps": out_steps, "warnings": warnings}


def cut_off(windows, step_of, warnings):
    """Rule 8: the steps to keep. Where the trace's last calls have no work,
    their steps go, when others remain; only if some call has work (Q12)."""
    keep = set(range(len(windows)))
    flat = sorted((c for cs in step_of.values() for c in cs), key=lambda c: c.ready)
    if not any(c.work for c in flat):
        return keep
    tail = []
    for c in reversed(flat):
        if c.work:
            break
        tail.append(c)
    cut = {i for i, cs in step_of.items() if any(c in cs for c in tail)}
    if cut and keep - cut:
        keep -= cut
        warnings.append(f"the profile ended before the work of the last calls: "
                        f"steps {sorted(windows[i]['name'] for i in cut)} left out")
    return keep


def step_windows(mine, steps, warnings):
    """Rule 1 and 6: each step's window, compute origin and phase times."""
    wins = []
    if steps:
        spans = [(ns(s["ts"]), ns(s["ts"] + s["dur"]), s["name"], s) for s in steps]
    else:
        opt = sorted((e for e in mine if str(e["name"]).startswith("Optimizer.step#")),
                     key=lambda e: e["ts"])
        first = min((ns(e["ts"]) for e in mine), default=0)
        spans, lo = [], first
        for k, e in enumerate(opt):
            spans.append((lo, ns(e["ts"] + e["dur"]), f"optimizer step {k}", None))
            lo = ns(e["ts"] + e["dur"])
        if spans:
            warnings.append("no ProfilerStep spans: steps end at each Optimizer.step")
        else:  # Q5
            last = max((ns(e["ts"] + e["dur"]) for e in mine), default=0)
            spans = [(first, last, "whole trace", None)]
            warnings.append("no ProfilerStep and no Optimizer.step spans: one step, the whole trace")
    for lo, hi, name, span in sorted(spans, key=lambda s: s[0]):
        inside = [e for e in mine if lo <= ns(e["ts"]) <= hi and e is not span]
        # Q4: the first op is the first CPU span nested in the step on its thread
        same = [e for e in inside if span is None or e.get("tid") == span.get("tid")]
        origin = min((ns(e["ts"]) for e in same), default=lo)
        bw = [e for e in inside
              if str(e["name"]).startswith("autograd::engine::evaluate_function")]
        if bw:
            b0 = min(ns(e["ts"]) for e in bw)
            b1 = max(ns(e["ts"] + e["dur"]) for e in bw)
            fwd, bwd = b0 - origin, b1 - b0
        else:  # Q6: no backward (inference): the forward runs to the step's end
            fwd, bwd = hi - origin, 0
        opt = sum(ns(e["ts"] + e["dur"]) - ns(e["ts"]) for e in inside
                  if str(e["name"]).startswith("Optimizer.step#"))
        wins.append({"lo": lo, "hi": hi, "name": name, "origin": origin,
                     "forward_ns": fwd, "backward_ns": bwd, "optimizer_ns": opt,
                     "step_ns": hi - lo if span is not None else None})
    return wins


def is_comm(name):
    return name.startswith("c10d::") or name == "record_param_comms" or BACKEND_RE.match(name)


def find_calls(mine):
    """Rule 2: clusters of nested comm spans per thread; gloo work spans apart."""
    by_tid = {}
    for e in mine:
        if is_comm(str(e["name"])):
            by_tid.setdefault(e.get("tid"), []).append(e)
    calls = []
    for spans in by_tid.values():
        spans.sort(key=lambda e: (ns(e["ts"]), -ns(e["dur"])))
        cur = None
        for e in spans:
            if cur is not None and cur.ready <= ns(e["ts"]) < cur.end:
                cur.spans.append(e)
            elif str(e["name"]).startswith("gloo:"):
                continue  # gloo's work span, matched in link_work (rule 5)
            elif e["name"] == "record_param_comms" and arg(e, "Collective name") == "wait":
                cur = None  # Q3: the work's wait, no collective
            else:
                cur = Call(e)
                calls.append(cur)
    for c in calls:
        c.kind = call_kind(c)
    return sorted(calls, key=lambda c: c.ready)


def call_kind(c, kernels=()):
    """Rule 3: the first source that names the kind."""
    srcs = [s["name"] for s in c.by(lambda n: n.startswith("c10d::"))]
    srcs += [arg(s, "Collective name") for s in c.by(lambda n: n == "record_param_comms")]
    srcs += [s["name"] for s in c.by(lambda n: BACKEND_RE.match(n))]
    srcs += [arg(k, "Collective name") for k in kernels]
    srcs += [k["name"] for k in kernels]
    for s in srcs:
        if s and kind_of(s):
            return kind_of(s)
    return None


def link_work(calls, xs, pid, mine, warnings):
    """Rule 5: kernels by correlation, else External id, else gpu annotation, else gloo."""
    runtime = {}
    for e in xs:
        if e.get("cat") in RUNTIME_CATS and e.get("pid") == pid:
            runtime.setdefault(e.get("tid"), []).append(e)
    kernels_by_corr, kernels_by_ext, gpu_ann = {}, {}, {}
    for e in xs:
        if e.get("cat") in KERNEL_CATS:
            if arg(e, "correlation") is not None:
                kernels_by_corr.setdefault(arg(e, "correlation"), []).append(e)
            ext = arg(e, "External id")
            ext = arg(e, "external id") if ext is None else ext  # torch 1.8 (Q1)
            if ext is not None:
                kernels_by_ext.setdefault(ext, []).append(e)
        elif e.get("cat") == "gpu_user_annotation" and BACKEND_RE.match(str(e["name"])):
            gpu_ann.setdefault(arg(e, "External id"), []).append(e)
    for c in calls:
        tid = c.root.get("tid")
        corr = {arg(r, "correlation") for r in runtime.get(tid, [])
                if c.ready <= ns(r["ts"]) < c.end}
        ks = [k for x in corr if x is not None for k in kernels_by_corr.get(x, [])]
        if not ks:
            exts = {arg(s, "External id") for s in c.spans} - {None}
            ks = [k for x in exts for k in kernels_by_ext.get(x, [])]
        c.kernels = sorted({id(k): k for k in ks}.values(), key=lambda k: k["ts"])
        if c.kernels:
            c.work = (ns(c.kernels[0]["ts"]),
                      max(ns(k["ts"] + k["dur"]) for k in c.kernels))
        else:
            anns = [a for s in c.by(lambda n: BACKEND_RE.match(n))
                    for a in gpu_ann.get(arg(s, "External id"), [])]
            if anns:
                c.work = (min(ns(a["ts"]) for a in anns),
                          max(ns(a["ts"] + a["dur"]) for a in anns))
        if c.kind is None:
            c.kind = call_kind(c, c.kernels)
    # gloo: work spans not nested in a call, on other threads, in order by kind.
    inside = {id(s) for c in calls for s in c.spans}
    work = {}
    for e in sorted((e for e in mine if str(e["name"]).startswith("gloo:")
                     and id(e) not in inside), key=lambda e: ns(e["ts"])):
        work.setdefault(kind_of(e["name"]), []).append(e)
    waiting = {}
    for c in calls:
        if c.work is None:
            waiting.setdefault(c.kind, []).append(c)
    for kind, cs in waiting.items():
        spans = work.get(kind, [])
        if spans and len(spans) != len(cs):
            warnings.append(f"{len(cs)} {kind} calls without GPU work, "
                            f"{len(spans)} gloo work spans: matched in order")
        for c, w in zip(cs, spans):
            c.gloo = w
            c.work = (ns(w["ts"]), ns(w["ts"] + w["dur"]))


def dtype_name(t):
    if t is None:
        return None
    return DTYPES.get(str(t).lower(), str(t).lower())


def group_size(c, groups, world):
    """The call's group size: Group size, the named group's ranks, the c10d op's
    output over its input (Q8: before the world, which can be wrong), the world."""
    srcs = c.by(lambda n: n == "record_param_comms") + c.kernels
    for s in srcs:
        n = arg(s, "Group size")
        if isinstance(n, int) and n > 0:
            return n
    for s in srcs:
        g = groups.get(str(arg(s, "Process Group Name")))
        if g and g.get("ranks"):
            return len(g["ranks"])
    for s in c.by(lambda n: n.startswith("c10d::_allgather_base")):
        dims = arg(s, "Input Dims") or []
        if len(dims) > 1 and numel(dims[0]) and numel(dims[1]):
            return numel(dims[0]) // numel(dims[1])
    return world


def elems(x):
    return x if isinstance(x, int) and x >= 0 else None


def size_of(c):
    """Rule 4: (input elements, output elements, dtype) from the first source."""
    for s in c.by(lambda n: n == "record_param_comms") + c.kernels:
        i, o = elems(arg(s, "In msg nelems")), elems(arg(s, "Out msg nelems"))
        if arg(s, "dtype") and ((i or o) or c.kind == "barrier"):
            return i, o, dtype_name(arg(s, "dtype"))
    gloo = [c.gloo] if getattr(c, "gloo", None) else []
    for s in c.by(lambda n: BACKEND_RE.match(n)) + gloo:  # Q7: gloo's work span too
        dims, types = arg(s, "Input Dims") or [], arg(s, "Input type") or []
        if dims and numel(dims[0]) is not None and types:
            return numel(dims[0]), None, dtype_name(types[0])
    for s in c.by(lambda n: n.startswith("c10d::")):
        dims, types = arg(s, "Input Dims") or [], arg(s, "Input type") or []
        n0 = numel(dims[0]) if dims else None
        t = types[0] if types and types[0] != "TensorList" else None
        if n0 is None or not t:
            continue
        if s["name"].startswith(("c10d::_allgather_base", "c10d::_reduce_scatter_base")) \
                and len(dims) > 1 and numel(dims[1]) is not None:
            return numel(dims[1]), n0, dtype_name(t)  # the first tensor is the output
        return n0, None, dtype_name(t)
    return None, None, None


def describe(c, origin, world, groups):
    """One collective of a step, times from the step's compute origin."""
    i, o, dtype = size_of(c)
    size = None
    if dtype in ELEM_BYTES and (i is not None or o is not None):
        e = ELEM_BYTES[dtype]
        if c.kind in ("alltoall", "send", "recv"):
            size = (i if i is not None else o) * e  # the send buffer, the message
        elif i is not None and o is not None:
            size = max(i, o) * e  # allgather's output, reduce-scatter's input
        elif c.kind == "allgather" and i is not None:
            n = group_size(c, groups, world)
            size = i * n * e if n else None
        else:
            size = (i if i is not None else o) * e
    if c.kind == "barrier":
        size = 0
    gname = None
    for s in c.by(lambda n: n == "record_param_comms") + c.kernels:
        if arg(s, "Process Group Name") is not None:
            gname = str(arg(s, "Process Group Name"))
            break
    start = dur = None
    if c.work:
        start, dur = c.work[0] - origin, c.work[1] - c.work[0]
    return {"kind": c.kind, "bytes": size, "dtype": dtype, "group_name": gname,
            "ready_ns": c.ready - origin, "start_ns": start, "duration_ns": dur}


def backend_from_names(calls):
    for c in calls:
        for s in c.spans:
            m = BACKEND_RE.match(str(s["name"]))
            if m:
                return m.group(1)
    return None


# --- NCCL logs -----------------------------------------------------------

# The prefix may follow anything (a timestamp, Ray's "(Worker pid=..)", a quote's
# "> "); a line that holds two messages (two ranks writing at once) is read
# from its last prefix, which is the one whose message follows.
PREFIX = r"(?P<host>[^\s:()]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] NCCL INFO "
LOG_RE = re.compile(PREFIX + r"(?P<name>[A-Za-z]+): (?P<rest>opCount .*)$")
INIT_RE = re.compile(PREFIX + r"comm (?P<comm>0x[0-9a-f]+) rank (?P<rank>\d+) "
                     r"nranks (?P<nranks>\d+)")
LOG_KINDS = {"AllReduce": "allreduce", "AllGather": "allgather",
             "ReduceScatter": "reduce-scatter", "Broadcast": "broadcast",
             "Reduce": "reduce", "Send": "send", "Recv": "recv", "AllToAll": "alltoall",
             "AllToAllv": "alltoall", "Gather": "gather", "Scatter": "scatter"}
NCCL_TYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16",
              "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"]


def read_log(path):
    """Each collective line, in file order, read field by field by name.

    A comm is named by host, pid and address: two processes can hold the
    same address (tests/fixtures/nccl/issue_nccl-tests_29.log)."""
    out, comms, warnings = [], {}, []
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for line in lines:
        m = INIT_RE.search(line)
        if m:
            comms[(m["host"], m["pid"], m["comm"])] = {
                "host": m["host"], "pid": int(m["pid"]), "comm": m["comm"],
                "rank": int(m["rank"]), "nranks": int(m["nranks"])}
    for no, line in enumerate(lines, 1):
        m = LOG_RE.search(line.strip())
        if not m:
            if re.search(r"\bopCount ", line):
                warnings.append(f"{path}:{no}: a collective line without its "
                                f"host:pid:tid [dev] prefix left out")
            continue
        if m["name"] not in LOG_KINDS:
            warnings.append(f"{path}:{no}: unknown collective {m['name']} left out")
            continue
        toks = m["rest"].replace("[nranks=", "nranks ").replace("]", "").split()
        fields = dict(zip(toks[0::2], toks[1::2]))
        try:
            count, dt = int(fields["count"]), int(fields["datatype"])
            if count < 0 or dt < 0:
                raise ValueError
            dtype = NCCL_TYPES[dt]
            comm = fields["comm"]
        except (KeyError, ValueError, IndexError):
            warnings.append(f"{path}:{no}: malformed {m['name']} line left out")
            continue
        known = comms.get((m["host"], m["pid"], comm), {})
        nranks = int(fields["nranks"]) if "nranks" in fields else known.get("nranks")
        kind = LOG_KINDS[m["name"]]
        size = count * ELEM_BYTES[dtype]
        if kind in ("allgather", "reduce-scatter", "alltoall", "gather", "scatter"):
            size = size * nranks if nranks else None  # count is one rank's share
        out.append({"line": no, "host": m["host"], "pid": int(m["pid"]),
                    "tid": int(m["tid"]), "dev": int(m["dev"]), "kind": kind,
                    "opcount": fields.get("opCount"), "count": count, "datatype": dt,
                    "dtype": dtype, "bytes": size, "comm": comm, "nranks": nranks,
                    "rank": known.get("rank"), "root": fields.get("root")})
    return {"collectives": out, "comms": list(comms.values()), "warnings": warnings}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--log":
        doc = read_log(sys.argv[2])
    elif len(sys.argv) == 2 and not sys.argv[1].startswith("-"):
        doc = read_trace(sys.argv[1])
    else:
        sys.exit(__doc__.split("\n\n")[0])
    json.dump(doc, sys.stdout, indent=1, default=str)
    print()


if __name__ == "__main__":
    main()
