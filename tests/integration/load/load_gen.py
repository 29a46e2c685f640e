#!/usr/bin/env python3
"""Load generator for trainpath's control-channel servers (net serve and the
boot rendezvous of the env launcher).

It speaks the client side of the control protocol from src/wire/wire.c and
src/wire/auth.c: frames are a 12-byte header (magic "TPC1", type << 16,
payload length; network byte order) and a JSON object; the handshake is
HELLO {proto, auth, nonce} from the server, AUTH {proto, nonce, mac} from the
client with mac = HMAC-SHA256(key, "trainpath-client" | server_nonce |
client_nonce), then WELCOME {mac = HMAC-SHA256(key, "trainpath-server" |
client_nonce | server_nonce)} or REJECT.

All connections are opened at once (asyncio, one thread), each with its own
deadline, in a mix of kinds:

  good       the right key: HELLO, AUTH, WELCOME (server proof checked), BYE
  nokey      AUTH without a mac (an unauthenticated client)
  wrong      AUTH with a mac made with another key
  random     random bytes at once, without waiting for HELLO
  oversize   a valid header announcing a 1 GiB payload
  badjson    a whole AUTH frame whose payload is not JSON but terminal
             control bytes (what a log must not pass through raw)
  truncated  half a frame header, then silence
  halfopen   connect and send nothing

Each connection ends one way: served (WELCOME, and BYE answered), welcome (a
WELCOME on a server we do not end the session with: the boot rendezvous),
busy (BUSY), reject (REJECT), error (an ERROR frame), closed (the server
closed or reset the connection), timeout (no verdict by the deadline),
connect (could not connect), badproof (WELCOME with a wrong server proof),
protocol (a frame we did not expect). The answer time is from the start of
connect to the verdict. The result is one JSON document (--json) and a table
on stdout prefixed '# ' so that it reads as TAP comments.
"""
import argparse
import asyncio
import hashlib
import hmac
import json
import os
import struct
import sys
import time

MAGIC = 0x54504331
HELLO, AUTH, WELCOME, BUSY, REJECT, ERROR, BYE = 1, 2, 3, 4, 5, 12, 13
NAMES = {HELLO: "HELLO", AUTH: "AUTH", WELCOME: "WELCOME", BUSY: "BUSY", REJECT: "REJECT",
         ERROR: "ERROR", BYE: "BYE"}
KINDS = ["good", "nokey", "wrong", "random", "oversize", "badjson", "truncated", "halfopen"]
OUTCOMES = ["served", "welcome", "busy", "reject", "error", "closed", "timeout", "connect",
            "badproof", "protocol"]


def read_key(path):
    with open(path, "rb") as f:
        return f.read().rstrip(b"\r\n \t")  # as tp_key_load trims


def frame(ftype, body):
    payload = json.dumps(body, separators=(",", ":")).encode()
    return struct.pack(">III", MAGIC, ftype << 16, len(payload)) + payload


async def read_frame(reader):
    hdr = await reader.readexactly(12)
    magic, tf, length = struct.unpack(">III", hdr)
    if magic != MAGIC or length > 65536:
        raise ValueError("bad frame header from the server")
    body = json.loads(await reader.readexactly(length)) if length else {}
    return tf >> 16, body


class Verdict(Exception):
    def __init__(self, outcome, detail=""):
        super().__init__(outcome)
        self.outcome, self.detail = outcome, detail


async def wait_close(reader):
    """Read until the server closes: the verdict of a client that will not
    (or cannot) finish a handshake."""
    while await reader.read(65536):
        pass
    raise Verdict("closed")


def verdict_of(ftype, body):
    if ftype == BUSY:
        return Verdict("busy")
    if ftype == REJECT:
        return Verdict("reject", body.get("message", ""))
    if ftype == ERROR:
        return Verdict("error", body.get("message", ""))
    return Verdict("protocol", "unexpected %s" % NAMES.get(ftype, ftype))


async def handshake(reader, writer, key, sign_with, end_session):
    """HELLO -> AUTH -> verdict. sign_with: the key to make the mac with, or
    None to send none."""
    ftype, hello = await read_frame(reader)
    if ftype != HELLO:
        raise verdict_of(ftype, hello)
    sn = bytes.fromhex(hello["nonce"])
    cn = os.urandom(32)
    auth = {"proto": 1, "nonce": cn.hex()}
    if sign_with is not None:
        auth["mac"] = hmac.new(sign_with, b"trainpath-client" + sn + cn, hashlib.sha256).hexdigest()
    writer.write(frame(AUTH, auth))
    await writer.drain()
    ftype, body = await read_frame(reader)
    if ftype != WELCOME:
        raise verdict_of(ftype, body)
    if key is not None and hello.get("auth") == "hmac-sha256":
        want = hmac.new(key, b"trainpath-server" + cn + sn, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(body.get("mac", ""), want):
            raise Verdict("badproof")
    if not end_session:
        raise Verdict("welcome")
    writer.write(frame(BYE, {}))
    await writer.drain()
    ftype, body = await read_frame(reader)
    raise Verdict("served") if ftype == BYE else verdict_of(ftype, body)


async def behave(kind, reader, writer, a):
    if kind == "good":
        await handshake(reader, writer, a.key, a.key, a.end_session)
    elif kind == "nokey":
        await handshake(reader, writer, a.key, None, a.end_session)
    elif kind == "wrong":
        await handshake(reader, writer, a.key, a.wrong, a.end_session)
    elif kind == "random":
        writer.write(os.urandom(a.random_bytes))
        await writer.drain()
    elif kind == "oversize":
        writer.write(struct.pack(">III", MAGIC, AUTH << 16, 1 << 30))
        await writer.drain()
    elif kind == "badjson":
        junk = b"\x1b[2J\x1b]0;owned\x07\r\ntrainpath: error: forged line"
        writer.write(struct.pack(">III", MAGIC, AUTH << 16, len(junk)) + junk)
        await writer.drain()
    elif kind == "truncated":
        writer.write(struct.pack(">III", MAGIC, AUTH << 16, 64)[:6])
        await writer.drain()
    # the rest: wait for the server's own verdict (BUSY first, or a close)
    ftype, body = await read_frame(reader)
    if ftype == HELLO:
        await wait_close(reader)
    raise verdict_of(ftype, body)


async def one(i, kind, a, go, res):
    await go.wait()
    await asyncio.sleep(a.stagger * i / a.total)
    t0 = time.monotonic()
    outcome, detail, writer = "timeout", "", None

    async def attempt():
        nonlocal writer, t0
        while True:  # a rendezvous may not be listening yet: retry refusals
            t0 = time.monotonic()  # answer times count from the connect that got through
            try:
                reader, writer = await asyncio.open_connection(a.host, a.port)
                break
            except ConnectionRefusedError:
                if not a.retry_refused:
                    raise Verdict("connect", "refused")
                await asyncio.sleep(0.05)
        a.connected += 1
        if a.connected == a.total and a.connected_file:
            open(a.connected_file, "w").close()
        await behave(kind, reader, writer, a)

    try:
        await asyncio.wait_for(attempt(), a.deadline)
    except Verdict as v:
        outcome, detail = v.outcome, v.detail
    except asyncio.TimeoutError:
        outcome = "timeout"
    except (asyncio.IncompleteReadError, ConnectionError):
        outcome = "closed"
    except OSError as e:
        outcome, detail = ("connect", str(e)) if writer is None else ("closed", str(e))
    except (ValueError, KeyError, TypeError) as e:  # a HELLO or WELCOME not as the source says
        outcome, detail = "protocol", "%s: %s" % (type(e).__name__, e)
    t = time.monotonic() - t0
    if writer is not None:
        writer.transport.abort()
    res.append({"i": i, "kind": kind, "outcome": outcome, "detail": detail[:200], "t_s": t})


def pct(xs, p):
    """Nearest-rank percentile, as the project documents its own."""
    if not xs:
        return None
    xs = sorted(xs)
    return xs[max(0, -(-len(xs) * p // 100) - 1)]


async def main_async(a, mix):
    go = asyncio.Event()
    res = []
    # interleave the kinds evenly, so that every kind meets the server in
    # every state (idle, busy, just freed)
    seq = [k for _, _, k in sorted((m / n, c, k) for c, (k, n) in enumerate(mix) for m in range(n))]
    tasks = [asyncio.ensure_future(one(i, k, a, go, res)) for i, k in enumerate(seq)]
    t0 = time.monotonic()
    go.set()
    await asyncio.gather(*tasks)
    return res, time.monotonic() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--key-file")
    p.add_argument("--wrong-key-file")
    p.add_argument("--mix", required=True, help="kind=N,... of " + ",".join(KINDS))
    p.add_argument("--deadline", type=float, default=10.0, help="seconds per connection")
    p.add_argument("--stagger", type=float, default=0.0,
                   help="spread the starts evenly over this many seconds (default: all at once)")
    p.add_argument("--random-bytes", type=int, default=4096)
    p.add_argument("--no-end-session", dest="end_session", action="store_false",
                   help="stop at WELCOME (the boot rendezvous: a stranger must not join)")
    p.add_argument("--retry-refused", action="store_true")
    p.add_argument("--connected-file", help="created once every connection is established")
    p.add_argument("--json")
    a = p.parse_args()
    mix = []
    for part in a.mix.split(","):
        k, n = part.split("=")
        if k not in KINDS:
            p.error("unknown kind " + k)
        mix.append((k, int(n)))
    if any(k == "good" for k, _ in mix) and not a.key_file:
        p.error("kind good needs --key-file")
    a.key = read_key(a.key_file) if a.key_file else None
    a.wrong = read_key(a.wrong_key_file) if a.wrong_key_file else os.urandom(32)
    a.total = sum(n for _, n in mix)
    a.connected = 0
    res, wall = asyncio.run(main_async(a, mix))
    by = {}
    for k, _ in mix:
        rs = [r for r in res if r["kind"] == k]
        ts = [r["t_s"] for r in rs]
        by[k] = {"n": len(rs),
                 "outcomes": {o: sum(r["outcome"] == o for r in rs) for o in OUTCOMES
                              if any(r["outcome"] == o for r in rs)},
                 "p50_s": pct(ts, 50), "p99_s": pct(ts, 99), "max_s": max(ts) if ts else None,
                 "details": sorted({r["detail"] for r in rs if r["detail"]})[:5]}
    doc = {"asked": a.total, "total": len(res), "wall_s": wall, "deadline_s": a.deadline,
           "kinds": by, "connections": sorted(res, key=lambda r: r["i"])}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    print("# %d connections in %.2f s (deadline %.1f s each)" % (len(res), wall, a.deadline))
    print("# %-10s %4s  %-44s %8s %8s %8s" % ("kind", "n", "outcomes", "p50 s", "p99 s", "max s"))
    for k, v in by.items():
        oc = " ".join("%s=%d" % kv for kv in v["outcomes"].items())
        print("# %-10s %4d  %-44s %8.3f %8.3f %8.3f" % (k, v["n"], oc, v["p50_s"], v["p99_s"],
                                                       v["max_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
