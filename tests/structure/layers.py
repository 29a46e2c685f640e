#!/usr/bin/env python3
"""The architecture of docs/architecture.md, checked on the built objects.

Reads the symbols of every object of libtrainpath and of the trainpath
binary (nm) and the #include lines of src/, and checks, printing TAP:

  1. every global symbol of the library starts with tp_ (public tp_<module>_,
     internal tp__<module>_), so the library can be linked into anything;
  2. an internal symbol (tp__...) is used only inside the folder that defines it;
  3. calls go down the layers only (cli -> validate -> net, coll, io, step,
     plan, check, report, triage, sdc, wlimport -> fabric, boot, storage, counters,
     topo -> gpu, wire -> core; a layer may call beside itself);
  4. no files call each other in a circle, and no folders do;
  5. no source includes a header implemented in a layer above its own;
  6. the CLI stays thin: no file in src/cli/ over 400 lines;
  7. nothing above src/fabric/ compares transport names (check/, which compares
     socket protocols, aside), and only src/boot/ reads the launchers' rank
     variables.

usage: layers.py SOURCE_ROOT LIBRARY.a CLI_OBJECT_DIR
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

RANK = {
    "core": 0,
    "gpu": 1, "wire": 1,
    "fabric": 2, "boot": 2, "storage": 2, "counters": 2, "topo": 2,
    "net": 3, "coll": 3, "io": 3, "step": 3, "plan": 3, "check": 3, "report": 3, "sdc": 3,
    "triage": 3, "wlimport": 3,
    "validate": 4,
    "cli": 5,
}
CLI_MAX_LINES = 400

root, lib, clidir = sys.argv[1:4]
src = os.path.join(root, "src")
n_test = 0
failed = 0


def tap(ok, what, details=()):
    global n_test, failed
    n_test += 1
    print(f"{'ok' if ok else 'not ok'} {n_test} - {what}")
    if not ok:
        failed += 1
        for d in list(details)[:40]:
            print(f"#   {d}")


def folder_of_object(path):
    """src/<folder>/<file>.c compiled to [src_]<folder>_<file>.c.o"""
    base = os.path.basename(path)
    if base.startswith("src_"):
        base = base[4:]
    folder, _, rest = base.partition("_")
    return folder, f"src/{folder}/{rest[:-2]}"   # drop the .o


def nm(args):
    out = subprocess.run(["nm", "-A"] + args, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        # "archive:member:addr T name" or "object:addr T name"
        head, _, tail = line.rpartition(":")
        parts = tail.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        obj = head.split(":")[-1] if head.count(":") else head
        rows.append((obj, kind, name))
    return rows


objects = [os.path.join(clidir, f) for f in sorted(os.listdir(clidir)) if f.endswith(".o")]
rows = nm([lib]) + nm(objects)
defined = {}                 # symbol -> source file
uses = defaultdict(set)      # source file -> symbols it needs
lib_globals = []
for obj, kind, name in rows:
    folder, file = folder_of_object(obj)
    if folder not in RANK:
        continue
    if kind == "U":
        uses[file].add(name)
    elif kind.isupper() and kind not in "UW" and not name.startswith("."):
        defined[name] = file
        if not obj.endswith(tuple(os.path.basename(o) for o in objects)) and folder != "cli":
            lib_globals.append((name, file))

fdir = lambda f: f.split("/")[1]

# 1. prefixes
# (names with two leading underscores are the compiler's and the sanitizers',
# as __odr_asan.NAME beside every global of an ASan build)
bad = sorted(f"{f}: {n}" for n, f in lib_globals if not n.startswith(("tp_", "__")))
tap(not bad, "every global symbol of the library starts with tp_", bad)

# 2. internal symbols stay in their folder
bad = sorted({f"{u} uses {s} of {defined[s]}" for u, ss in uses.items() for s in ss
              if s.startswith("tp__") and s in defined and fdir(defined[s]) != fdir(u)})
tap(not bad, "internal symbols (tp__) are used only inside their own folder", bad)

# 3. calls go down
edges = defaultdict(set)     # file -> files it calls
for u, ss in uses.items():
    for s in ss:
        d = defined.get(s)
        if d and d != u:
            edges[u].add((d, s))
bad = sorted({f"{u} ({fdir(u)}) calls {s} of {d} ({fdir(d)})" for u, es in edges.items()
              for d, s in es if RANK[fdir(d)] > RANK[fdir(u)]})
tap(not bad, "calls go down the layers only", bad)


def circles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


fgraph = {u: {d for d, _ in es} for u, es in edges.items()}
comps = circles(fgraph)
tap(not comps, "no files call each other in a circle",
    [" <-> ".join(c) for c in comps])
dgraph = defaultdict(set)
for u, ds in fgraph.items():
    for d in ds:
        if fdir(d) != fdir(u):
            dgraph[fdir(u)].add(fdir(d))
comps = circles(dgraph)
tap(not comps, "no folders call each other in a circle", [" <-> ".join(c) for c in comps])

# 5. includes: a header belongs to the folder that defines the functions it declares
header_folder = {}
inc = os.path.join(root, "include", "tp")
for h in sorted(os.listdir(inc)):
    text = open(os.path.join(inc, h)).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    folders = {fdir(defined[n]) for n in re.findall(r"\b(tp_\w+)\s*\(", text) if n in defined}
    if folders:
        header_folder[f"tp/{h}"] = max(folders, key=lambda f: RANK[f])


def source_lines():
    """(path relative to root, its folder, line number, line) of every line of src/."""
    for dirpath, _, files in sorted(os.walk(src)):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                for n, line in enumerate(open(path, errors="replace"), 1):
                    yield rel, rel.split("/")[1], n, line


bad = []
for rel, mine, n, line in source_lines():
    m = re.match(r'\s*#\s*include\s+"(tp/[\w.]+)"', line)
    if mine in RANK and m and m.group(1) in header_folder and \
            RANK[header_folder[m.group(1)]] > RANK[mine]:
        bad.append(f"{rel}:{n} includes {m.group(1)} (implemented in "
                   f"src/{header_folder[m.group(1)]}/)")
tap(not bad, "no source includes a header implemented above its layer", sorted(bad))

# 6. a thin CLI
sizes = {}
for f in sorted(os.listdir(os.path.join(src, "cli"))):
    if f.endswith((".c", ".h")):
        sizes[f] = sum(1 for _ in open(os.path.join(src, "cli", f)))
bad = [f"src/cli/{f}: {n} lines" for f, n in sizes.items() if n > CLI_MAX_LINES]
tap(not bad, f"no file in src/cli/ over {CLI_MAX_LINES} lines "
    f"({sum(sizes.values())} lines in all)", bad)

# 7. names only the lower layers know
transport = re.compile(r'strn?cmp\s*\([^;]*"(ofi|tcp|shm)"')
launcher = re.compile(r'"(OMPI_COMM_WORLD_\w*|PMI_RANK|PMIX_RANK|PMI_SIZE|SLURM_PROCID|'
                      r'RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT)"')
bad_t, bad_l = [], []
for rel, mine, n, line in source_lines():
    if mine not in ("fabric", "check") and transport.search(line):
        bad_t.append(f"{rel}:{n}: {line.strip()}")
    if mine != "boot" and launcher.search(line):
        bad_l.append(f"{rel}:{n}: {line.strip()}")
tap(not bad_t, "no strcmp against a transport name outside src/fabric/ (and src/check/)", bad_t)
tap(not bad_l, "the launchers' rank variables are named only in src/boot/", bad_l)

print(f"1..{n_test}")
sys.exit(1 if failed else 0)
