#!/usr/bin/env bash
# Hardening, class 8 (docs/reliability.md): output a person and a pipe can
# trust. What a peer sends (a server's ERROR) and what a file holds (a plan's
# candidate names, a thresholds file's labels, a policy's keys) reaches the
# terminal only as safe text: no ESC, no other C0 or C1 control, no forged
# line. And with --json - stdout is the result document alone, for every
# command that takes --json (the tables go to stderr).
. "$(dirname "$0")/../lib.sh"

# no_ctl FILE: true when FILE holds no control character but \n and \t (no
# ESC, no CR, no C1 control U+0080..U+009F); shows the offending line.
no_ctl() {
    /usr/bin/python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
m = re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", t)
if m:
    line = t[:m.start()].count("\n") + 1
    print(f"# control U+{ord(m.group()):04X} on line {line}: {t.splitlines()[line - 1]!r}")
    sys.exit(1)
PY
}

# The fake peer: a loopback server that answers every connection with one
# ERROR frame (src/wire/wire.c: magic "TPC1", type << 16, length, JSON) whose
# message clears the screen, moves the cursor with an 8-bit CSI and forges
# a "trainpath: ok" line; its code is the argument.
EVIL=$'\e[2J\r\ntrainpath: ok \xc2\x9b31m'
cat >"$WORK/peer.py" <<'PY'
import json, socket, struct, sys
code = sys.argv[1]
msg = "\x1b[2J\r\ntrainpath: ok \x9b31m"
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(8)
print(f"listening on 127.0.0.1 port {s.getsockname()[1]}", flush=True)
s.settimeout(60)
while True:
    try:
        c, _ = s.accept()
    except OSError:
        break
    body = json.dumps({"code": code, "message": msg}).encode()
    c.sendall(struct.pack(">III", 0x54504331, 12 << 16, len(body)) + body)
    c.close()
PY
for code in peer usage; do
    /usr/bin/python3 "$WORK/peer.py" "$code" >"$WORK/peer-$code.log" 2>&1 &
    PIDS+=("$!")
    wait_log "listening on" "$WORK/peer-$code.log" || { not_ok "fake peer ($code) started"; continue; }
    P=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$WORK/peer-$code.log")
    timeout 20 "$TP" net lat 127.0.0.1 --port "$P" --iters 1 --timeout 5s --json "$WORK/peer-$code.json" \
        >"$WORK/net-$code.out" 2>&1
    rc=$?
    check "a peer's ERROR (code $code) is printed without its controls" no_ctl "$WORK/net-$code.out"
    check "... once, on one line, naming the peer" test "$(grep -c "error: peer 127.0.0.1" "$WORK/net-$code.out")" = 1 -a \
        "$(grep -c "trainpath: ok" "$WORK/net-$code.out")" = "$(grep -c "error: peer.*trainpath: ok" "$WORK/net-$code.out")"
    # the peer failed, whatever it calls its error: exit 1
    check "... the peer failed: exit 1 (code $code; got $rc)" test "$rc" -eq 1
    check "... and the document keeps the peer's words, JSON-escaped" test "$(json_get "$WORK/peer-$code.json" "'\x1b[2J' in d['status']['message']")" = True
done

# a plan file whose candidate name carries an escape sequence, a CR and a
# forged line: the table and the words print it as safe text
sed 's/^  - name: tcp-100g-nfs/  - name: "tcp\\e[2J\\r\\ntrainpath: ok\\x9b"/' "$SRC/docs/examples/plan.yaml" >"$WORK/evil-plan.yaml"
check "the evil plan file names the candidate" grep -q 'e\[2J' "$WORK/evil-plan.yaml"
run_rc 0 "$WORK/plan.out" timeout 30 "$TP" plan "$WORK/evil-plan.yaml"
check "plan with an escape in a candidate's name runs" test $? -eq 0
check "... and its table and words carry no control character" no_ctl "$WORK/plan.out"
check "... the name shown as '?'s" grep -q 'tcp?\[2J??trainpath: ok?' "$WORK/plan.out"

# a thresholds file whose label value carries the same: the gate's lines
cat >"$WORK/evil-gate.yaml" <<'YAML'
thresholds:
  - metric: coll.time.p50
    labels: {size: "4096\e[2J\r\ntrainpath: ok"}
    max: 1s
YAML
"$TP" coll -n 2 --sizes 4K --iters 3 -q --json "$WORK/c.json" >/dev/null 2>&1
run_rc 2 "$WORK/gate.out" "$TP" report gate --all "$WORK/evil-gate.yaml" "$WORK/c.json"
check "report gate: the label matches nothing (exit 2)" test $? -eq 0
check "... and the line naming it carries no control character" no_ctl "$WORK/gate.out"

# a policy file with an escape in a key: the error quotes the file's text
printf 'role: compute\n"evil\\e[2J\\r\\ntrainpath: ok": 1\n' >"$WORK/evil-policy.yaml"
"$TP" check --policy "$WORK/evil-policy.yaml" --root "$SRC/tests/fixtures/check/node-rdma" >"$WORK/pol.out" 2>&1
check "check: a policy key with an escape is refused" grep -q "evil-policy.yaml" "$WORK/pol.out"
check "... in an error without control characters" no_ctl "$WORK/pol.out"

# --json -: stdout is the document alone, every command that takes --json
start_server srv -- --bind 127.0.0.1 || not_ok "net server started"
D=$WORK/io
mkdir -p "$D"
FX=$SRC/tests/fixtures/check/node-rdma
"$TP" report add "$WORK/c.json" --db "$WORK/h.sqlite" >/dev/null 2>&1
cmds=(
    "net lat 127.0.0.1 --port $PORT --sizes 8 --iters 20"
    "coll -n 2 --sizes 1K,4K --iters 3"
    "io commit $D --count 5"
    "io checkpoint $D --size 1M --shards 2 --repeat 1"
    "io dataset $D --records 64 --files 2 --epochs 1"
    "io info $D"
    "step -n 2 --steps 3 --no-io --compute-ms 1 --dir $D"
    "plan $SRC/docs/examples/plan.yaml"
    "plan interval --checkpoint-cost 1m --mtbf 1d"
    "check --root $FX"
    "check facts --root $FX"
    "report gate $WORK/evil-gate.yaml $WORK/c.json"
    "report diff $WORK/c.json $WORK/c.json"
    "report history coll.time.p50 --db $WORK/h.sqlite"
    "report baseline --db $WORK/h.sqlite"
    "report add $WORK/c.json --db $WORK/h.sqlite"
    "report html $WORK/c.json --out $WORK/r.html"
    "report prometheus $WORK/c.json --out $WORK/p.prom"
)
for c in "${cmds[@]}"; do
    # shellcheck disable=SC2086
    timeout 120 "$TP" $c --json - >"$WORK/stdout" 2>"$WORK/stderr"
    rc=$?
    if /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$WORK/stdout" 2>"$WORK/perr"; then
        ok "trainpath $c --json -: stdout parses as JSON (exit $rc)"
    else
        not_ok "trainpath $c --json -: stdout parses as JSON (exit $rc)"
        sed 's/^/#   /' "$WORK/perr" | tail -1
        head -3 "$WORK/stdout" | sed 's/^/#   stdout: /'
        head -3 "$WORK/stderr" | sed 's/^/#   stderr: /'
    fi
done
finish
