#!/usr/bin/env bash
# The progress line of long work (include/tp/progress.h, docs/progress.md):
# on a real pseudo-terminal (script(1)) every long command draws one line
# on stderr, redrawn in place ("\r" ... ESC [K) with what runs, done/total
# and the time left, and erases it before its table; with stderr not a
# terminal, with -q, with --json - or with TP_PROGRESS=0 not one byte of it
# is written, and what the command prints is the same either way.
. "$(dirname "$0")/../lib.sh"

command -v script >/dev/null || skip_all "no script(1) (util-linux)"

# pty OUT CMDLINE: run the shell command line CMDLINE with its stdin,
# stdout and stderr on a fresh pseudo-terminal; what the terminal got goes
# into OUT (CMDLINE may redirect stdout or stderr away from it).
pty() {
    local out=$1 cmd=$2
    env -u TP_PROGRESS TERM=xterm timeout 120 script -qfec "$cmd" /dev/null >"$out" 2>&1 </dev/null
}

# has_progress FILE: true when FILE holds a progress byte: an ESC, or a
# carriage return that does not end a line (a terminal's "\r\n" does)
has_progress() {
    /usr/bin/python3 -c "import re,sys
sys.exit(0 if re.search(rb'\r(?!\n)|\x1b', open(sys.argv[1],'rb').read()) else 1)" "$1"
}
no_progress() { ! has_progress "$1" || { echo "# progress bytes in $1:"; cat -v "$1" | head -5 | sed 's/^/#   /'; false; }; }

# the lines drawn in FILE: what follows each "\r" up to the end of a line,
# without the ESC [K around it
LINES="import re,sys
d = open(sys.argv[1],'rb').read().decode('utf-8','replace')
lines = [l for l in (re.sub(r'\x1b\[K', '', p).split('\n')[0] for p in d.split('\r')[1:]) if l]"

# drawn FILE ERE: FILE holds a redrawn line that matches ERE, and its last
# progress write is the erase ("\r" ESC [K)
drawn() {
    /usr/bin/python3 -c "$LINES
ok = any(re.search(sys.argv[2], l) for l in lines)
# the last progress write is the erase: nothing of the line is left
last = d.rfind('\x1b[K')
erased = last >= 2 and d[last-1] == '\r'
if not (ok and erased):
    print('# no line matching %r, or not erased at the end (%d lines drawn):' % (sys.argv[2], len(lines)))
    for l in lines[:6]: print('#   ' + l)
sys.exit(0 if ok and erased else 1)" "$1" "$2"
}

# paced FILE MS: the lines drawn in FILE over a run of MS milliseconds came
# at most four a second (and one more at each end), their done counts
# never going back: one process draws, at its rate limit
paced() {
    /usr/bin/python3 -c "$LINES
n = [int(m.group(1)) for m in (re.search(r': ([0-9]+)[/:]', l) for l in lines) if m]
ok = len(lines) <= 4 * int(sys.argv[2]) / 1000 + 2 and n == sorted(n)
if not ok: print('# %d lines in %s ms, done %s' % (len(lines), sys.argv[2], n))
sys.exit(0 if ok else 1)" "$1" "$2"
}
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# the estimate: "N/M UNIT, m:ss elapsed, about m:ss left" (time-bound: "m:ss/m:ss, about")
EST='about [0-9]+:[0-9][0-9] left'

# ---- sdc: time-bound, its threads on every CPU, the line drawn by its own thread
t0=$(ms)
pty "$WORK/sdc.pty" "$TP sdc --time 2s --threads 1 >$WORK/sdc.out"
t1=$(ms)
check "sdc on a terminal: 'sdc, 1 chain: 0:0N/0:02, about 0:0N left' redrawn, then erased" \
    drawn "$WORK/sdc.pty" "^sdc, 1 chain: 0:0[0-2]/0:02, $EST\$"
check "... at most four draws a second, by one thread" paced "$WORK/sdc.pty" $((t1 - t0))
check "... its table on stdout, without a progress byte" \
    eval "grep -q 'one thread computed .*, compared with nothing' '$WORK/sdc.out' && no_progress '$WORK/sdc.out'"
pty "$WORK/sdc-redir.pty" "$TP sdc --time 1s --threads 1 >$WORK/sdc-redir.out 2>$WORK/sdc-redir.err"
check "sdc with stderr redirected to a file: no progress byte there (nor on the terminal)" \
    eval "no_progress '$WORK/sdc-redir.err' && no_progress '$WORK/sdc-redir.pty'"
pty "$WORK/sdc-q.pty" "$TP sdc --time 1s --threads 1 -q"
check "sdc -q on a terminal: no progress byte" no_progress "$WORK/sdc-q.pty"
pty "$WORK/sdc-json.pty" "$TP sdc --time 1s --threads 1 --json - >$WORK/sdc.json"
check "sdc --json - on a terminal: no progress byte (the table goes to stderr)" \
    eval "no_progress '$WORK/sdc-json.pty' && grep -q 'thread  cpu' '$WORK/sdc-json.pty'"
check "... stdout is the document alone" valid_doc "$WORK/sdc.json"
pty "$WORK/sdc-off.pty" "TP_PROGRESS=0 $TP sdc --time 1s --threads 1"
check "TP_PROGRESS=0: no progress byte" no_progress "$WORK/sdc-off.pty"
# by steps: the same chain whether or not the line was drawn
pty "$WORK/steps.pty" "$TP sdc --steps 3000 --threads 1 --json $WORK/steps-pty.json >/dev/null"
"$TP" sdc --steps 3000 --threads 1 --json "$WORK/steps-file.json" >/dev/null 2>&1
check "sdc --steps: the same final hash with the line as without" test \
    "$(json_get "$WORK/steps-pty.json" "r['steps'], [t['final'] for t in r['threads_detail']]")" = \
    "$(json_get "$WORK/steps-file.json" "r['steps'], [t['final'] for t in r['threads_detail']]")"

# ---- step: steps done on rank 0, drawn between steps
t0=$(ms)
pty "$WORK/step.pty" "$TP step -n 2 --steps 60 --no-io --json $WORK/step.json >$WORK/step.out"
t1=$(ms)
check "step on a terminal: 'step custom: N/60 steps, ... elapsed, about ... left'" \
    drawn "$WORK/step.pty" "^step custom: [0-9]+/60 steps, [0-9]+:[0-9][0-9] elapsed, $EST\$"
check "... drawn by rank 0 alone, at most four times a second" paced "$WORK/step.pty" $((t1 - t0))
check "... the table on stdout and the document unchanged" \
    eval "grep -q '^# run' '$WORK/step.out' && no_progress '$WORK/step.out' && valid_doc '$WORK/step.json'"
pty "$WORK/step-json.pty" "$TP step -n 2 --steps 60 --no-io --json - >$WORK/step-stdout.json"
check "step --json - on a terminal: no progress byte; stdout parses" \
    eval "no_progress '$WORK/step-json.pty' && valid_doc '$WORK/step-stdout.json'"

# ---- coll: the sweep on rank 0, sizes done, the rows printed under it
pty "$WORK/coll.pty" "$TP coll -n 2 --sizes 1M,2M,4M,8M --time 300ms --json $WORK/coll.json"
check "coll on a terminal: 'coll allreduce SIZE (trainpath): N/4 sizes ... left'" \
    drawn "$WORK/coll.pty" "^coll allreduce [0-9]+M \\(trainpath\\): [0-9]/4 sizes, .*$EST\$"
check "... every row of the table starts at the margin (the line erased before it)" \
    /usr/bin/python3 -c "import re,sys
d = open(sys.argv[1],'rb').read().decode('utf-8','replace')
clean = re.sub(r'\r[^\r\n\x1b]*\x1b\[K', '', d).replace('\r\n', '\n')
rows = [l for l in clean.split('\n') if re.match(r'^ +[0-9]+M +[0-9]+ ', l)]
bad = [l for l in clean.split('\n') if 'sizes,' in l or '\r' in l or '\x1b' in l]
sys.exit(0 if len(rows) == 4 and not bad else 1)" "$WORK/coll.pty"
check "... the document" valid_doc "$WORK/coll.json"
pty "$WORK/coll-q.pty" "$TP coll -n 2 --sizes 1M,2M,4M,8M --time 300ms -q"
check "coll -q on a terminal: no progress byte" no_progress "$WORK/coll-q.pty"

# ---- io: commits by time
mkdir -p "$WORK/io"
pty "$WORK/io.pty" "$TP io commit $WORK/io --time 2s --count 100000 --overwrite >$WORK/io.out"
check "io commit on a terminal: 'io commit: 0:0N/0:02, about ... left'" \
    drawn "$WORK/io.pty" "^io commit: 0:0[0-2]/0:02, $EST\$"
check "... the table on stdout without a progress byte" \
    eval "grep -q 'commits of 4K' '$WORK/io.out' && no_progress '$WORK/io.out'"
# a log line while the line is up starts at the margin: the same write
# erases the line first (tp_progress_erase)
pty "$WORK/ck.pty" "$TP io checkpoint $WORK/io --size 32M --shards 2 --repeat 2 >/dev/null"
check "io checkpoint: each 'checkpoint N/2' log line erases the progress line first" test \
    "$(grep -ac $'\r\033\\[Ktrainpath: info: checkpoint [12]/2' "$WORK/ck.pty")" = 2
pty "$WORK/io-json.pty" "$TP io commit $WORK/io --time 1s --count 100000 --overwrite --json - >$WORK/io.json"
check "io --json - on a terminal: no progress byte; stdout parses" \
    eval "no_progress '$WORK/io-json.pty' && valid_doc '$WORK/io.json'"

# ---- net: the client, sizes done (the part of a size measured counts)
if start_server srv -- --bind 127.0.0.1; then
    pty "$WORK/net.pty" "$TP net lat 127.0.0.1 --port $PORT --sizes 8,64 --time 1s >$WORK/net.out"
    check "net lat on a terminal: 'net lat SIZE: N/2 sizes, ... left'" \
        drawn "$WORK/net.pty" "^net lat (8|64): [0-2]/2 sizes, [0-9]+:[0-9][0-9] elapsed, $EST\$"
    check "... the table on stdout without a progress byte" \
        eval "grep -q 'one-way latency' '$WORK/net.out' && no_progress '$WORK/net.out'"
    pty "$WORK/net-json.pty" "$TP net lat 127.0.0.1 --port $PORT --sizes 8,64 --time 500ms --json - >$WORK/net.json"
    check "net --json - on a terminal: no progress byte; stdout parses" \
        eval "no_progress '$WORK/net-json.pty' && valid_doc '$WORK/net.json'"
else
    not_ok "net serve did not start"
fi

# ---- validate: tests done, the current test, the profile's time left
pty "$WORK/val.pty" "$TP validate --only sdc --out $WORK/val >$WORK/val.out"
check "validate on a terminal: a redrawn line with tests done/total and the time left" \
    drawn "$WORK/val.pty" "[0-9]+/[0-9]+.* left\$"
check "... and its summary on stdout without a progress byte" \
    eval "grep -q '^ok   sdc' '$WORK/val.out' && no_progress '$WORK/val.out'"
pty "$WORK/val-q.pty" "$TP validate --only sdc --out $WORK/val-q -q"
check "validate -q on a terminal: no progress byte" no_progress "$WORK/val-q.pty"

finish
