#!/usr/bin/env python3
"""A large torch.profiler trace made of a real one, repeated: the size a
real multi-node job's trace reaches (0.5-2 GB), for the import's memory
bound (big_trace.sh) and its speed (bench/wlimport-vs-json.sh).

    gen_trace.py SOURCE.json[.gz] BYTES [--gzip] > big.json

Each copy of SOURCE's events is shifted in time past the previous one (by
the span of its ProfilerStep#N spans, plus 1 ms), its step numbers past the
previous copy's, and its ids (External id, correlation, flow ids) past the
largest id, so every copy is a new set of steps that links within itself.
Events are serialised once into templates split around those fields; a
copy is their join.
Written to standard output in chunks; stops at the first copy that reaches
BYTES.
"""

import gzip
import json
import re
import sys
import zlib

ID_KEYS = ("External id", "correlation")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, want = sys.argv[1], int(float(sys.argv[2]))
    gz = "--gzip" in sys.argv[3:]
    doc = load(src)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#") and "dur" in e]
    if not steps:
        sys.exit(f"{src}: no ProfilerStep#N spans to repeat")
    t0 = min(e["ts"] for e in steps)
    span = max(e["ts"] + e["dur"] for e in steps) - t0 + 1000.0
    nstep = len(steps)
    ids = [int(v) for e in events for k, v in e.get("args", {}).items()
           if k in ID_KEYS and isinstance(v, int)] + [int(e["id"]) for e in events if isinstance(e.get("id"), int)]
    idspan = (max(ids) + 1) if ids else 1
    # templates: the event's text split around its fields (ts, ids, the
    # step number), each copy joined with the fields shifted
    tmpl = []
    for e in events:
        e = dict(e)
        fields = {}  # name -> value; the text holds @@name@@ where each goes
        if isinstance(e.get("ts"), (int, float)):
            fields["ts"] = float(e["ts"])
            e["ts"] = "@@ts@@"
        if isinstance(e.get("id"), int):
            fields["id"] = e["id"]
            e["id"] = "@@id@@"
        args = dict(e.get("args", {}))
        for k in ID_KEYS:
            if isinstance(args.get(k), int):
                fields[k] = args[k]
                args[k] = "@@%s@@" % k
        if args:
            e["args"] = args
        m = re.match(r"ProfilerStep#(\d+)$", str(e.get("name", "")))
        if m:
            fields["step"] = int(m.group(1))
            e["name"] = "ProfilerStep#@@step@@"
        text = json.dumps(e, separators=(",", ":"))
        text = re.sub(r'"@@([^@]+)@@"', r"@@\1@@", text)  # numbers, not strings
        parts = re.split(r"@@([^@]+)@@", text)  # literal, name, literal, name, ...
        tmpl.append((parts[0::2], [(k, fields[k]) for k in parts[1::2]]))
    head = {k: v for k, v in doc.items() if k != "traceEvents"} if isinstance(doc, dict) else {}
    out = sys.stdout.buffer
    z = zlib.compressobj(6, zlib.DEFLATED, 31) if gz else None
    written = 0

    def put(s):
        nonlocal written
        b = s.encode()
        written += len(b)
        out.write(z.compress(b) if z else b)

    put(json.dumps(head)[:-1] + (", " if head else "") + '"traceEvents": [\n')
    copy = 0
    while written < want:
        shift = {"ts": copy * span, "step": copy * nstep, "id": copy * idspan}
        for k in ID_KEYS:
            shift[k] = copy * idspan
        chunk = []
        add = chunk.append
        for parts, fields in tmpl:
            add(parts[0])
            for (k, v), tail in zip(fields, parts[1:]):
                add("%.3f" % (v + shift[k]) if k == "ts" else str(v + shift[k]))
                add(tail)
            add(",\n")
        text = "".join(chunk)
        put(("" if copy == 0 else ",\n") + text[:-2])
        copy += 1
    put("\n]}\n")
    if z:
        out.write(z.flush())
    out.flush()
    print(f"gen_trace: {copy} copies of {src}, {copy * nstep} steps, {written} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
