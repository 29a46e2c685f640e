#!/usr/bin/env python3
"""mask.py DOC WORK SRC: the result document DOC, pretty-printed with sorted
keys, with what differs between two runs of the same binary masked, so that
capture.sh's documents compare equal unless the behaviour changed.

Masked (the value replaced by "<masked>"; the key stays, so a key that
appears or disappears is still a difference):
  - what the clock says, wherever it is (TIMING_KEYS): started_utc and
    finished_utc, and the counters probe's window_s and cost_ms;
  - what names this process or this build: provenance.process (pid and
    affinity), provenance.clock (TSC rate, read overhead), tool.version
    (the commit of the build: two builds differ by it by construction),
    provenance.host;
  - per command, its measured times under names that are model figures in
    other commands (COMMAND_KEYS: sdc's step_time);
  - the live counters a run reads around itself (results.counters' moving
    parts: changed, levels, causes, links, samples): other work on the
    machine moves them;
  - in every string: the work folder (WORK) and the source tree (SRC),
    replaced by <work> and <src>.
"""
import json
import sys

MASK = "<masked>"
TIMING_KEYS = {"started_utc", "finished_utc", "window_s", "cost_ms"}
COUNTER_MOVES = {"changed", "levels", "causes", "links", "samples"}
# per command: keys that are measured times there (and model figures elsewhere)
COMMAND_KEYS = {"sdc": {"step_time"}}


def walk(v, path, work, src, timed=frozenset()):
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            p = path + (k,)
            if k in TIMING_KEYS or k in timed:
                out[k] = MASK
            elif path == ("tool",) and k == "version":
                out[k] = MASK
            elif path == ("provenance",) and k in ("host", "process", "clock"):
                out[k] = MASK
            elif path[-1:] == ("counters",) and k in COUNTER_MOVES:
                out[k] = MASK
            else:
                out[k] = walk(x, p, work, src, timed)
        return out
    if isinstance(v, list):
        return [walk(x, path, work, src, timed) for x in v]
    if isinstance(v, str):
        return v.replace(work, "<work>").replace(src, "<src>")
    return v


def main():
    doc, work, src = sys.argv[1:4]
    with open(doc, encoding="utf-8") as f:
        d = json.load(f)
    timed = COMMAND_KEYS.get(d.get("command"), frozenset()) if isinstance(d, dict) else ()
    json.dump(walk(d, (), work, src, timed), sys.stdout, indent=1, sort_keys=True, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
