#!/usr/bin/env bash
# Class 4 of docs/reliability.md's adversarial findings: readers that trust
# what they read. Every `report` subcommand that reads result documents
# (add, diff, gate, html, prometheus, fleet) checks each against the schema
# version it claims, its shape and the physical sense of its figures, and
# refuses a bad one naming the file (exit 2; gate 3 with its UNKNOWN outcome
# written). A folder's bad .json is refused, not passed over; a diff of two
# commands, of a failed run, or of nothing in common is refused.
. "$(dirname "$0")/../lib.sh"

# real documents: net lat at 8 and 64 B, net lat at 4 KiB alone, a failed
# net lat (nothing listening) and a plan
start_server srv -- --bind 127.0.0.1 || exit 1
"$TP" net lat 127.0.0.1 --port "$PORT" --sizes 8,64 --iters 300 --json "$WORK/lat.json" >/dev/null 2>&1
"$TP" net lat 127.0.0.1 --port "$PORT" --sizes 4K --iters 300 --json "$WORK/lat4k.json" >/dev/null 2>&1
"$TP" net lat 127.0.0.1 --port 1 --iters 1 --json "$WORK/failed.json" >/dev/null 2>&1
"$TP" plan "$SRC/docs/examples/plan.yaml" --json "$WORK/plan.json" >/dev/null 2>&1
check "real documents made (net lat twice, a failed net lat, a plan)" \
    valid_doc "$WORK/lat.json" "$WORK/lat4k.json" "$WORK/failed.json" "$WORK/plan.json"

# the tampered copies of lat.json, one defect each
mkdir -p "$WORK/bad"
/usr/bin/python3 - "$WORK/lat.json" "$WORK/bad" <<'PY'
import json, sys, copy
src, out = sys.argv[1], sys.argv[2]
text = open(src).read()
doc = json.loads(text)
def put(name, d):
    with open(f"{out}/{name}.json", "w") as f:
        f.write(d if isinstance(d, str) else json.dumps(d))
def tamper(name, fn):
    d = copy.deepcopy(doc); fn(d); put(name, d)
put("truncated", text[: len(text) // 2])
with open(f"{out}/garbage.json", "wb") as f:
    f.write(b"\x00\xff\xfe garbage {{{ \x1b[2J")
tamper("version2", lambda d: d.update(schema="trainpath.result/2"))
def strnum(d):
    lat = d["results"]["sizes"][0]["latency"]; lat["p99"] = str(lat["p99"])
tamper("strnum", strnum)
tamper("resnull", lambda d: d.update(results=None))
def huge(d): d["results"]["sizes"][0]["latency"]["p99"] = 1e308
tamper("huge", huge)
def neg(d): d["results"]["sizes"][1]["latency"]["mean"] = -5.0
tamper("negative", neg)
def badunit(d): d["results"]["sizes"][0]["latency"]["unit"] = "parsec"
tamper("badunit", badunit)
tamper("nocommand", lambda d: d.update(command="net frob"))
tamper("noschema", lambda d: d.pop("schema"))
def histo(d): d["results"]["sizes"][0]["rtt_histogram"]["buckets"] = "lots"
tamper("histogram", histo)
PY
printf 'thresholds:\n  - metric: net.lat.latency.p99\n    max: 1s\n' >"$WORK/t.yaml"

# bad document | subcommands (all: add, diff both ways, gate, html,
# prometheus; some: gate and prometheus) | what the message says
cases=(
    "truncated|all|not JSON"
    "garbage|all|not JSON"
    "version2|all|claims schema \"trainpath.result/2\""
    "strnum|all|p99 is a string, want a number"
    "resnull|all|\"results\" is null, want an object"
    "huge|all|p99.* = 1e\+308 ns is beyond the bound"
    "negative|all|mean.* = -5 ns is negative"
    "badunit|some|unit \"parsec\" is not one trainpath writes"
    "nocommand|some|command \"net frob\" is not one trainpath runs"
    "noschema|some|no \"schema\""
    "histogram|some|histogram"
)
good="$WORK/lat.json"
gates=()
for c in "${cases[@]}"; do
    IFS='|' read -r name which pat <<<"$c"
    f="$WORK/bad/$name.json"
    # subcommand | exit | arguments (the bad document among them)
    runs=(
        "gate|3|report gate $WORK/t.yaml $good $f --json $WORK/g-$name.json"
        "prometheus|2|report prometheus --out $WORK/p-$name.prom $f"
    )
    [ "$which" = all ] && runs+=(
        "add|2|report add $f --db $WORK/h-$name.sqlite"
        "diff (as baseline)|2|report diff $f $good"
        "diff (as candidate)|2|report diff $good $f"
        "html|2|report html --out $WORK/r-$name.html $good $f"
    )
    for r in "${runs[@]}"; do
        IFS='|' read -r sub want args <<<"$r"
        # shellcheck disable=SC2086
        expect_exit "$want" "$pat" "$name: report $sub -> exit $want, '$pat'" $args
        check "... naming the file" grep -qF -- "$f" "$WORK/out"
    done
    gates+=("$WORK/g-$name.json" "$f")
    check "$name: add created no history, html and prometheus wrote nothing" \
        test ! -e "$WORK/h-$name.sqlite" -a ! -e "$WORK/r-$name.html" -a ! -e "$WORK/p-$name.prom"
done
check "every refused gate wrote its UNKNOWN outcome (code 3) naming the file" /usr/bin/python3 -c "
import json, sys
a = sys.argv[1:]
bad = [g for g, f in zip(a[::2], a[1::2])
       if not (lambda d: d['status'] == 'UNKNOWN' and d['code'] == 3 and f in d['error'])(
           json.load(open(g)))]
print('# not UNKNOWN naming the file:', bad) if bad else None
sys.exit(1 if bad else 0)" "${gates[@]}"

# fleet lines that carry a document are held to the same check
/usr/bin/python3 - "$WORK/bad/huge.json" "$WORK/fleet.jsonl" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
open(sys.argv[2], "w").write(json.dumps({"host": "n1", "test": "net-lat", "doc": d}) + "\n")
PY
run_rc 2 "$WORK/fleet.out" "$TP" report fleet "$WORK/fleet.jsonl"
check "fleet: a line's document with p99 1e308 -> exit 2" test $? -eq 0
check "... naming the file and line, and why" grep_q "fleet.jsonl:1.*beyond the bound" "$WORK/fleet.out"

# a folder: every bad .json named, nothing done; a report's own --json
# output (JSON that claims no result schema) is passed over
mkdir -p "$WORK/dir" "$WORK/mixed"
cp "$good" "$WORK/dir/a-good.json"
cp "$WORK/bad/truncated.json" "$WORK/dir/b-truncated.json"
cp "$WORK/bad/version2.json" "$WORK/dir/c-version2.json"
echo "not a document" >"$WORK/dir/notes.txt"
run_rc 2 "$WORK/fh.out" "$TP" report html --out "$WORK/dir.html" "$WORK/dir"
check "html on a folder with two bad .json: exit 2" test $? -eq 0
check "... naming both" grep_q "2 documents refused: .*b-truncated.json.*c-version2.json" "$WORK/fh.out"
check "... and writing no page" test ! -e "$WORK/dir.html"
run_rc 3 "$WORK/fg.out" "$TP" report gate "$WORK/t.yaml" "$WORK/dir" --json "$WORK/fg.json"
check "gate on that folder: exit 3" test $? -eq 0
check "... GATE UNKNOWN first, naming both files, not 'did not run'" \
    /usr/bin/python3 -c "
import sys; t = open('$WORK/fg.out').read()
first = [l for l in t.splitlines() if l.startswith('GATE')][0]
sys.exit(0 if first.startswith('GATE UNKNOWN:') and 'b-truncated.json' in first
         and 'c-version2.json' in first and 'did not run' not in t else 1)"
check "... its outcome UNKNOWN, naming both" /usr/bin/python3 -c "
import json, sys; d = json.load(open('$WORK/fg.json'))
sys.exit(0 if d['status'] == 'UNKNOWN' and 'b-truncated.json' in d['error']
         and 'c-version2.json' in d['error'] else 1)"
run_rc 2 "$WORK/fa.out" "$TP" report add "$WORK/dir" --db "$WORK/dir.sqlite"
check "add on that folder: exit 2, nothing added" test $? -eq 0 -a ! -e "$WORK/dir.sqlite"
run_rc 2 "$WORK/fp.out" "$TP" report prometheus --out "$WORK/dir.prom" "$WORK/dir"
check "prometheus on that folder: exit 2, no textfile" test $? -eq 0 -a ! -e "$WORK/dir.prom"
cp "$good" "$WORK/mixed/a.json"
"$TP" report diff "$good" "$good" --json "$WORK/mixed/diff-out.json" -q
"$TP" report gate "$WORK/t.yaml" "$good" --json "$WORK/mixed/gate-out.json" -q
run_rc 0 "$WORK/fm.out" "$TP" report html --out "$WORK/mixed.html" "$WORK/mixed"
check "a folder with report's own --json outputs beside a document: html exit 0" test $? -eq 0
check "... showing the one document" grep_q "\(1 documents\)" "$WORK/fm.out"
run_rc 0 "$WORK/gok.out" "$TP" report gate "$WORK/t.yaml" "$WORK/mixed"
check "... and gate judges it: exit 0" test $? -eq 0

run_rc 2 "$WORK/dz.out" timeout 10 "$TP" report prometheus --out "$WORK/z.prom" /dev/zero
check "a device (/dev/zero) as a document: exit 2 at once, naming it" \
    grep_q "/dev/zero: is a character device; a result document must be a regular file" "$WORK/dz.out"

# diff: two commands, a failed run, nothing in common
run_rc 2 "$WORK/d1.out" "$TP" report diff "$good" "$WORK/plan.json"
check "diff of a net lat and a plan result: exit 2" test $? -eq 0
check "... naming both and their commands" \
    grep_q "lat.json is a 'net lat' result, .*plan.json a 'plan' result" "$WORK/d1.out"
run_rc 2 "$WORK/d2.out" "$TP" report diff "$good" "$WORK/failed.json"
check "diff against a failed run: exit 2, naming it" test $? -eq 0
check "... naming it as a failed run" grep_q "failed.json: the result of a failed run" "$WORK/d2.out"
run_rc 2 "$WORK/d3.out" "$TP" report diff "$good" "$WORK/lat4k.json"
check "diff of net lat at 8, 64 B against 4 KiB (nothing in common): exit 2" test $? -eq 0
check "... saying 0 rows compared" grep_q "no figure in common: 0 rows compared" "$WORK/d3.out"
run_rc 0 "$WORK/d4.out" "$TP" report diff "$good" "$good"
check "the sound document against itself still: exit 0" test $? -eq 0
finish
