#!/usr/bin/env bash
# The HTML report: documents from the real binary (coll, net lat, io commit,
# step, plan, check) rendered through tp_html_report ($HTML_DRIVER, the test
# driver html_driver.c) into one page: its sections in order, a plot of each
# kind with a unit on every axis, the figures it shows equal to the
# documents', hostile strings escaped, nothing fetched from the network, no
# script, sections without documents left out, bad verdicts refused without
# touching the old page; the counters section (hand-made counters with loss
# and downtrained, one whose read failed, one without) and the causes'
# marker on the key figure. Then headless Chromium: a screenshot that is not
# blank and a DOM with the same structure (skipped without chromium).
. "$(dirname "$0")/../lib.sh"
DRIVER=${HTML_DRIVER:?HTML_DRIVER must name the html_driver test executable}
HC="/usr/bin/python3 $SRC/tests/integration/report/html_check.py"
D=$WORK/docs
mkdir -p "$D" "$WORK/io"

# ---- documents, measured here ----
check "coll -n 2 --sizes 8-1M" run_rc 0 "$WORK/coll.out" \
    "$TP" coll -n 2 --sizes 8-1M --time 20ms --json "$D/coll.json"
if start_server srv -- --bind 127.0.0.1; then
    check "net lat 8,4K,64K against net serve" run_rc 0 "$WORK/lat.out" \
        "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 8,4K,64K --iters 2000 --json "$D/lat.json"
else
    not_ok "net serve starts"
fi
check "io commit --count 100" run_rc 0 "$WORK/commit.out" \
    "$TP" io commit --dir "$WORK/io" --count 100 --json "$D/commit.json"
check "step -n 2 --steps 10 --no-io" run_rc 0 "$WORK/step.out" \
    "$TP" step -n 2 --steps 10 --no-io --json "$D/step.json"
# a candidate whose name is markup: the page must show it, not run it
export EVIL="tcp<script>alert(1)</script> & 'co'"
awk -v name="$EVIL" '$0 == "  - name: tcp-100g-nfs" { print "  - name: \"" name "\""; next } { print }' \
    "$SRC/docs/examples/plan.yaml" >"$WORK/plan.yaml"
check "plan with a candidate named $EVIL" run_rc 0 "$WORK/plan.out" \
    "$TP" plan "$WORK/plan.yaml" --json "$D/plan.json"
check "... the name kept in the document" \
    test "$(json_get "$D/plan.json" "__import__('os').environ['EVIL'] in r['ranking']")" = True
"$TP" check --policy "$SRC/docs/examples/policy.yaml" --json "$D/check.json" >"$WORK/check.out" 2>&1
crc=$?
check "check --policy (Nagios exit 0-2: $crc)" test "$crc" -le 2
# summary PAGE JSON: the page's structure (sections, plots, boxes, tables, text)
summary() { $HC page "$1" >"$2" || { echo '{}' >"$2"; return 1; }; }
# absent REGEX FILE: true when nothing in FILE matches (any case); shows what does
absent() {
    local m
    m=$(grep -Eio -- "$1" "$2" | head -5)
    [ -z "$m" ] && return 0
    echo "# found in $2:"; echo "$m" | sed 's/^/#   /'
    return 1
}
DOCS=("$D/coll.json" "$D/lat.json" "$D/commit.json" "$D/step.json" "$D/plan.json" "$D/check.json")

# ---- the page, with verdicts ----
cat >"$WORK/verdicts.json" <<'EOF'
[{"name": "net-lat", "status": "PASS", "summary": "p99 under 50 us"},
 {"name": "io-commit", "status": "WARN", "summary": "p99 \"near\" the 'limit' <2 ms>", "seconds": 1.5},
 {"name": "coll", "status": "FAIL", "summary": "busbw below 1 GB/s"},
 {"name": "check", "status": "SKIP", "summary": "not run"}]
EOF
P=$WORK/report.html
check "html_driver renders the six documents with four verdicts" run_rc 0 "$WORK/render.out" \
    "$DRIVER" "$P" --verdicts "$WORK/verdicts.json" "${DOCS[@]}"
summary "$P" "$WORK/page.json"
pg() { json_get "$WORK/page.json" "$1"; }
check "sections in order: verdicts latency busbw step plan check counters (documents)" \
    test "$(pg "d['sections']")" = \
    "['verdicts', 'latency', 'busbw', 'step', 'plan', 'check', 'counters', 'documents']"
check "plots: cdf+hist for net lat and io commit, busbw, step and its timeline, plan x2 (step time, cost)" \
    test "$(pg "sorted(p['kind'] for p in d['plots'] if 'plot' in p['class'])")" = \
    "['busbw', 'cdf', 'cdf', 'hist', 'hist', 'plan', 'plan', 'step', 'timeline']"
check "every plot has two axis titles, each with its unit in parentheses" \
    test "$(json_run "$WORK/page.json" "import re
print(all(len(p['axis_titles']) == 2 and all(re.search(r'\(.+\)', t) for t in p['axis_titles']) for p in d['plots']))")" = True
axes() { json_run "$WORK/page.json" "print(' | '.join(t for p in d['plots'] if p['kind'] == '$1' for t in p['axis_titles']))"; }
check "... latency CDFs on a log axis in a time unit: $(axes cdf | head -c 160)" \
    grep -Eq "latency.*\((ms|us|ns), log scale\)" <(axes cdf)
check "... busbw in GB/s against size in bytes: $(axes busbw)" \
    grep -Eq "message size \(bytes, log scale\) \| bus bandwidth \(GB/s\)" <(axes busbw)
check "... step breakdown in ms: $(axes step)" grep -q "time per step (ms)" <(axes step)
check "... plan: step time and cost against GPUs" \
    grep -Eq "GPUs .*step time \((s|ms)\).*GPUs .*cost per run \(\\\$" <(axes plan)
check "net lat CDF: one line per message size (3)" \
    test "$(pg "[p['series'] for p in d['plots'] if p['kind'] == 'cdf']")" = "[3, 1]"
check "busbw: one point per message size of the document" \
    test "$(pg "[p['circles'] for p in d['plots'] if p['kind'] == 'busbw'][0]")" = \
    "$(json_get "$D/coll.json" "len([x for x in r['sizes'] if x['size_bytes'] > 0])")"
check "step: four stacked layers, one compute bar per step (10)" \
    test "$(pg "[p['bars'] for p in d['plots'] if p['kind'] == 'step'][0][:1], len([p['bars'] for p in d['plots'] if p['kind'] == 'step'][0])")" = "[10] 4"
check "step timeline: a bar for each event of the document's first 4 steps, both ranks" \
    test "$(pg "[p['spans'] for p in d['plots'] if p['kind'] == 'timeline']")" = \
    "[$(json_get "$D/step.json" "sum(len(x['events']) for x in r['timeline']['ranks'])")]"
check "... and each rank's training loop has its 4 computes" test "$(json_get "$D/step.json" \
    "sorted(set(sum(1 for e in x['events'] if e[1] == 'compute') for x in r['timeline']['ranks']))")" = "[4]"
# figures on the page equal the documents' (three significant digits)
tofloat='def v(s):
    n, u = s.split()
    return float(n) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "GB/s": 1e9}[u]'
check "the 8 B one-way p50 on the page is the document's" test "$(json_run "$WORK/page.json" "$tofloat
import json
lat = json.load(open('$D/lat.json'))['results']['sizes'][0]['latency']['p50']
row = [t for t in d['tables'] if t['section'] == 'latency'][0]['rows'][1]
print(row[0], abs(v(row[3]) / lat - 1) < 0.005)")" = "8 B True"
check "the peak busbw on the page is the document's" test "$(json_run "$WORK/page.json" "$tofloat
import json
best = max(s['busbw']['value'] for s in json.load(open('$D/coll.json'))['results']['sizes'])
row = [t for t in d['tables'] if t['section'] == 'busbw'][0]['rows'][1]
print(abs(v(row[1]) / best - 1) < 0.005)")" = True
check "plan table in the document's ranking order" test "$(json_run "$WORK/page.json" "import json
rank = json.load(open('$D/plan.json'))['results']['ranking']
rows = [t for t in d['tables'] if t['section'] == 'plan'][0]['rows'][1:]
print([r[1] for r in rows] == rank)")" = True
check "verdicts: four boxes, PASS WARN FAIL SKIP, with their names" \
    test "$(pg "[(v['status'][0], v['name']) for v in d['verdicts']]")" = \
    "[('PASS', 'net-lat'), ('WARN', 'io-commit'), ('FAIL', 'coll'), ('SKIP', 'check')]"
check "check findings: all of them, FAIL then UNKNOWN then WARN then PASS then SKIP" \
    test "$(json_run "$WORK/page.json" "import json
f = [x['status'] for x in json.load(open('$D/check.json'))['results']['findings']]
o = ['FAIL', 'UNKNOWN', 'WARN', 'PASS', 'SKIP']
s = d['check_statuses']
print(sorted(s) == sorted(f) and s == sorted(s, key=o.index))")" = True
check "the candidate's name shows as text in the table, the words and a legend" \
    test "$(json_run "$WORK/page.json" "import os
n = os.environ['EVIL']
print(any(n in row for t in d['tables'] for row in t['rows']), n in d['text'].split('Plan')[-1], any(n in p['texts'] for p in d['plots']))")" = "True True True"
check "... escaped in the file: no <script, &lt;script&gt; instead" absent '<script' "$P"
check "... as &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;co&#39;" \
    grep -qF '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;co&#39;' "$P"
check "quotes in a verdict escaped (&quot; &#39;)" \
    grep -q "p99 &quot;near&quot; the &#39;limit&#39; &lt;2 ms&gt;" "$P"
check "self-contained: no http:// or https://, no link/img/iframe/import/url()/src" \
    absent 'https?://|<link|<img|<iframe|@import|url\(|src=' "$P"
check "no JavaScript: no script element, no on* handler" absent '<script|[[:space:]]on[a-z]+=' "$P"
check "the same documents give the same bytes" run_rc 0 "$WORK/again.out" \
    "$DRIVER" "$WORK/again.html" --verdicts "$WORK/verdicts.json" "${DOCS[@]}"
check "... identical" cmp -s "$P" "$WORK/again.html"

# ---- without verdicts, a section left out, failures ----
check "no verdicts: boxes derived from the documents" run_rc 0 "$WORK/derived.out" \
    "$DRIVER" "$WORK/derived.html" "${DOCS[@]}"
summary "$WORK/derived.html" "$WORK/derived.json"
case $crc in 0) want=PASS ;; 1) want=WARN ;; *) want=FAIL ;; esac
check "... one a document; check's is its Nagios status ($want), the rest INFO" \
    test "$(json_get "$WORK/derived.json" "' '.join(v['status'][0] for v in d['verdicts'])")" = \
    "INFO INFO INFO INFO INFO $want"
check "only a check document" run_rc 0 "$WORK/only.out" "$DRIVER" "$WORK/only.html" "$D/check.json"
summary "$WORK/only.html" "$WORK/only.json"
check "... no latency, busbw, step or plan section" \
    test "$(json_get "$WORK/only.json" "d['sections']")" = "['verdicts', 'check', 'documents']"
sed -e 's/  compute_time: 1.7s/  compute_tme: 1.7s/' "$SRC/docs/examples/plan.yaml" >"$WORK/typo.yaml"
"$TP" plan "$WORK/typo.yaml" --json "$WORK/typo.json" >/dev/null 2>&1
check "a failed plan run" run_rc 0 "$WORK/failed.out" "$DRIVER" "$WORK/failed.html" "$WORK/typo.json"
summary "$WORK/failed.html" "$WORK/failed.json"
check "... a FAIL box saying why, no plan section" \
    test "$(json_get "$WORK/failed.json" "d['sections'], d['verdicts'][0]['status'], 'compute_tme' in d['verdicts'][0]['text']")" = \
    "['verdicts', 'documents'] ['FAIL'] True"
echo '[{"name": "x", "status": "MAYBE"}]' >"$WORK/bad.json"
cp "$P" "$WORK/before.html"
check "a verdict with status MAYBE: exit 2" run_rc 2 "$WORK/bad.out" \
    "$DRIVER" "$P" --verdicts "$WORK/bad.json" "${DOCS[@]}"
check "... naming verdicts[0] and the status" \
    grep -q "verdicts\[0\] (x): status must be PASS, WARN, FAIL, UNKNOWN or SKIP, not MAYBE" "$WORK/bad.out"
check "... the old page untouched" cmp -s "$P" "$WORK/before.html"
check "a folder that does not exist: exit 2" run_rc 2 "$WORK/nodir.out" \
    "$DRIVER" "$WORK/nowhere/r.html" "$D/check.json"
check "... naming it" grep -qF "$WORK/nowhere/r.html" "$WORK/nodir.out"

# ---- counters: the deltas beside each test, causes flagged on the key figure ----
# net lat with counters (by hand) naming loss and downtrained, markup in
# device names; io commit whose counters could not be read; step without
# counters
mkdir -p "$WORK/ctr"
/usr/bin/python3 - "$D" "$WORK/ctr" <<'PY'
import json, sys
src, out = sys.argv[1:3]
bad = "mlx5_<script>alert(2)</script>/1"
d = json.load(open(src + "/lat.json"))
ev = [{"dev": bad, "source": "rdma", "name": "port_xmit_discards", "delta": 1234}] + [
    {"dev": "Tcp" if k % 2 else "TcpExt", "source": "tcp", "name": "Retrans%d" % k, "delta": k + 1}
    for k in range(5)]
d["results"]["counters"] = {
    "window_s": 2.5, "counters_read": 321, "path": "eth<b>0", "samples": 3, "cost_ms": 4.25,
    "changed": [{"dev": "eth<b>0", "source": "netdev", "name": "rx_bytes", "unit": "bytes",
                 "delta": 2500000000, "class": "traffic"},
                {"dev": "eth9", "source": "netdev", "name": "tx_bytes", "unit": "bytes",
                 "delta": 77, "class": "traffic"},
                {"dev": "TcpExt", "source": "tcp", "name": "TCPHPAcks", "unit": "events",
                 "delta": 5, "class": "other"}] +
               [dict(e, unit="packets", **{"class": "loss"}) for e in ev],
    "reset": [{"dev": "mlx5_0/1", "source": "rdma", "name": "port_rcv_data", "before": 4294967000,
               "after": 12}],
    "levels": [], "gone": ["rdma:mlx5_2/1"], "new": ["netdev:eth<i>9"],
    "links": [{"dev": "0000:3b:00.0", "speed_mts": 8000, "max_speed_mts": 16000, "width": 4,
               "max_width": 16, "downtrained": True, "changed": False},
              {"dev": "0000:5e:00.0", "speed_mts": 16000, "max_speed_mts": 16000, "width": 16,
               "max_width": 16, "downtrained": False, "changed": False}],
    "causes": [{"cause": "loss", "text": "packets were lost on the path", "evidence": ev},
               {"cause": "downtrained", "text": "a PCIe link runs below its maximum",
                "evidence": [{"dev": "0000:3b:00.0", "source": "pcie", "name": "link",
                              "speed_mts": 8000, "width": 4}]}]}
d["results"]["connections"] = [{"flow": 0, "kind": "pingpong", "total_retrans": 17,
                                "bytes_retrans": 4096, "lost": 2, "rtt_us": 250,
                                "rttvar_us": 40, "delivery_rate_Bps": 1250000000}]
json.dump(d, open(out + "/causes.json", "w"))
d = json.load(open(src + "/commit.json"))
d["results"]["counters"] = {"error": "cannot read <sysfs> & 'proc'"}
json.dump(d, open(out + "/error.json", "w"))
d = json.load(open(src + "/step.json"))
d["results"].pop("counters", None)
json.dump(d, open(out + "/none.json", "w"))
PY
CD=("$WORK/ctr/causes.json" "$WORK/ctr/error.json" "$WORK/ctr/none.json")
check "the counters fixtures are valid result documents" valid_doc "${CD[@]}"
check "html_driver renders them without verdicts" run_rc 0 "$WORK/ctr.out" \
    "$DRIVER" "$WORK/ctr.html" "${CD[@]}"
C=$WORK/ctr.html
summary "$C" "$WORK/ctr.json"
ctext() { json_get "$WORK/ctr.json" "d['text'].split('Counters')[-1]"; }
blk() { # blk K: the text of document K's counters block
    json_run "$WORK/ctr.json" "import re
print(' '.join(re.sub(r'\s+', ' ', d['text'].split('Counters')[-1]).split(' document ')[$1:$1 + 1])[:4000])"
}
check "a counters section, before documents" \
    test "$(json_get "$WORK/ctr.json" "d['sections']")" = \
    "['verdicts', 'latency', 'step', 'counters', 'documents']"
check "a block for the document with counters and the one whose counters failed, none for step" \
    test "$(grep -o 'id="counters-[0-9]*"' "$C" | tr '\n' ' ')" = 'id="counters-1" id="counters-2" '
check "... loss and downtrained flagged as WARN badges" \
    test "$(sed -n 's/^<div class="cause"><span class="st WARN">\([a-z_]*\)<.*/\1/p' "$C" | tr '\n' ' ')" = \
    "loss downtrained "
check "... with their sentences" grep -q "loss packets were lost on the path.*downtrained a PCIe link runs below its maximum" <(blk 1)
check "... loss's evidence: the first four with deltas, then +2 more" \
    grep -qF "evidence: mlx5_<script>alert(2)</script>/1 port_xmit_discards +1234, TcpExt Retrans0 +1, Tcp Retrans1 +2, TcpExt Retrans2 +3, +2 more" <(blk 1)
check "... downtrained's evidence: the link's speed and width" \
    grep -qF "evidence: 0000:3b:00.0 link 8 GT/s x4" <(blk 1)
check "... the window, counters read and path" \
    grep -qF "321 counters read over 2.50 s, path eth<b>0; 3 samples of the PCIe links" <(blk 1)
check "... counters that point at a cause: all six, not traffic or other" \
    test "$(json_run "$WORK/ctr.json" "t = [t for t in d['tables'] if t['section'] == 'counters'][0]['rows']
print(len(t) - 1, {r[0] for r in t[1:]}, t[1][2:5])")" = \
    "6 {'loss'} ['mlx5_<script>alert(2)</script>/1', 'port_xmit_discards', '1234']"
check "... the downtrained link, not the healthy one: 8 GT/s of 16 GT/s, x4 of x16" \
    test "$(json_run "$WORK/ctr.json" "print([r for t in d['tables'] for r in t['rows'] if r[0].startswith('0000:')])")" = \
    "[['0000:3b:00.0', '8 GT/s of 16 GT/s', 'x4 of x16', 'downtrained']]"
check "... the reset (no delta claimed), devices gone and new" \
    grep -qF "wrapped or reset, no delta claimed: mlx5_0/1 port_rcv_data 4294967000 → 12 devices gone during the run: rdma:mlx5_2/1 devices new during the run: netdev:eth<i>9" <(blk 1)
check "... the path's traffic in a closed <details>, only the path's device" \
    test "$(json_run "$WORK/ctr.json" "t = [t for t in d['tables'] if t['rows'][0][0] == 'class'][0]['rows']
print(t[1:])")" = "[['traffic', 'netdev', 'eth<b>0', 'rx_bytes', '2500000000 (2.5 GB)', 'bytes']]"
check "... (the <details> closed)" grep -q '^<details><summary>traffic counters of the path (1)</summary>$' "$C"
check "... the connection: retransmits, rtt, rttvar, delivery rate" \
    test "$(json_run "$WORK/ctr.json" "print([r for t in d['tables'] for r in t['rows'] if r[1:2] == ['pingpong']])")" = \
    "[['0', 'pingpong', '17', '4096', '2', '250 us', '40.0 us', '1.25 GB/s', '-']]"
check "the key figure's box names the causes, the status stays INFO" \
    test "$(json_run "$WORK/ctr.json" "v = d['verdicts'][0]
print(v['status'], 'counters: loss, downtrained' in v['text'])")" = "['INFO'] True"
check "... and links to the block" grep -q '<div class="flag"><a href="#counters-1">counters: loss, downtrained</a></div>' "$C"
check "... the other boxes carry no marker" test "$(grep -c 'class="flag"' "$C")" = 1
check "the failed read: one line 'counters not read: WHY'" \
    grep -qE "^2 on [^ ]+ counters not read: cannot read <sysfs> & 'proc' Documents" <(blk 2)
check "every string from the counters escaped: no <script, <b>, <i> or <sysfs> in the file" \
    absent '<script|<b>|<i>|<sysfs>' "$C"
check "... shown as &lt;script&gt;, &lt;b&gt;, &lt;i&gt;, &lt;sysfs&gt; &amp; &#39;proc&#39;" \
    test "$(for t in 'mlx5_&lt;script&gt;alert(2)&lt;/script&gt;/1 port_xmit_discards +1234' \
        'path <code>eth&lt;b&gt;0</code>' 'netdev:eth&lt;i&gt;9' \
        'counters not read: cannot read &lt;sysfs&gt; &amp; &#39;proc&#39;'; do
        grep -cF -- "$t" "$C"; done | tr '\n' ' ')" = "1 1 1 1 "
check "with verdicts: the key figures table names the causes on the net lat row" \
    run_rc 0 "$WORK/ctrv.out" "$DRIVER" "$WORK/ctrv.html" --verdicts "$WORK/verdicts.json" "${CD[@]}"
summary "$WORK/ctrv.html" "$WORK/ctrv.json"
check "... (net lat: counters: loss, downtrained; io commit and step: none)" \
    test "$(json_run "$WORK/ctrv.json" "t = [t for t in d['tables'] if t['section'] == 'verdicts'][0]['rows']
print([(r[0], 'counters: loss, downtrained' in r[2], 'counters:' in r[2]) for r in t[1:]])")" = \
    "[('net lat', True, True), ('io commit', False, False), ('step', False, False)]"

# ---- headless Chromium: the page as a browser shows it ----
# $CHROMIUM names the browser (empty: none, to run without it)
CHROME=${CHROMIUM-$(command -v chromium || command -v chromium-browser || command -v google-chrome)}
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP chromium not installed"; }
# no network for the browser: every host name resolves to nothing
chrome() {
    timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
        --disable-extensions --user-data-dir="$WORK/chrome" \
        --host-resolver-rules="MAP * ~NOTFOUND" "$@" 2>>"$WORK/chrome.err"
}
if [ -z "$CHROME" ]; then
    for t in "screenshot" "... a 1280x2000 PNG, not blank" "DOM: sections" "DOM: plots" \
        "DOM: axis units" "DOM: verdicts" "DOM: no script element" "DOM: the name as text"; do
        skip "$t"
    done
    finish
fi
shoot() { # shoot PNG PAGE: a 1280x2000 screenshot
    chrome --screenshot="$1" --window-size=1280,2000 "file://$2" >/dev/null && test -s "$1" ||
        { echo "# chromium:"; tail -5 "$WORK/chrome.err" | sed 's/^/#   /'; return 1; }
}
check "chromium --screenshot of the page" shoot "$WORK/shot.png" "$P"
$HC png "$WORK/shot.png" >"$WORK/png.json" 2>&1 || echo '{}' >"$WORK/png.json"
sed 's/^/# /' "$WORK/png.json"
check "... a 1280x2000 PNG, not blank (many colours, no colour on 98 % of it)" \
    test "$(json_get "$WORK/png.json" "d.get('width'), d.get('height'), d.get('colours', 0) > 50 and d.get('commonest_share', 1) < 0.98")" = "1280 2000 True"
chrome --dump-dom "file://$P" >"$WORK/dom.html"
summary "$WORK/dom.html" "$WORK/dom.json"
same() { test "$(json_get "$WORK/dom.json" "$1")" = "$(json_get "$WORK/page.json" "$1")" &&
    test -n "$(json_get "$WORK/dom.json" "$1")"; }
check "DOM: every section id, in order" same "d['sections']"
check "DOM: the same svg plots, data-kinds, axis titles, lines and points" \
    same "[(p['kind'], p['class'], p['axis_titles'], p['series'], p['circles']) for p in d['plots']]"
check "DOM: axis units GB/s, ms, us or ns" test "$(json_run "$WORK/dom.json" "import re
t = ' | '.join(x for p in d['plots'] for x in p['axis_titles'])
print(all(re.search(u, t) for u in [r'\(GB/s\)', r'\(ms\)', r'\((us|ns), log scale\)']))")" = True
check "DOM: the verdicts" same "[(v['status'], v['text']) for v in d['verdicts']]"
check "DOM: no script element" absent '<script' "$WORK/dom.html"
check "DOM: the candidate's name as text" grep -qF 'tcp&lt;script&gt;alert(1)&lt;/script&gt;' "$WORK/dom.html"
finish
