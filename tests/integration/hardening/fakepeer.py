#!/usr/bin/env python3
"""Hostile peers of trainpath's control protocol (src/wire/wire.c: a 12-byte
header, magic "TPC1", type << 16, payload length, network byte order, then a
JSON object), for the hardening tests.

  fakepeer.py trickle-server PORTFILE [DELAY_S]
      listen on 127.0.0.1 (port written to PORTFILE), and send each client a
      valid HELLO one byte every DELAY_S (default 0.2 s)
  fakepeer.py silent-client PORT
      connect to a `net serve`, authenticate (no key), send a REQUEST asking
      for an hour of timeout, then say nothing; exit when the server closes
      (prints the seconds that took)
  fakepeer.py trickle-client PORT [DELAY_S]
      connect and answer the server's HELLO with an AUTH one byte at a time
"""
import json
import os
import socket
import struct
import sys
import time

MAGIC = 0x54504331
HELLO, AUTH, WELCOME, REQUEST, ACCEPT = 1, 2, 3, 6, 7


def frame(ftype, body):
    data = json.dumps(body).encode()
    return struct.pack("!III", MAGIC, ftype << 16, len(data)) + data


def recv_frame(s):
    hdr = b""
    while len(hdr) < 12:
        got = s.recv(12 - len(hdr))
        if not got:
            raise EOFError
        hdr += got
    _, tf, n = struct.unpack("!III", hdr)
    data = b""
    while len(data) < n:
        got = s.recv(n - len(data))
        if not got:
            raise EOFError
        data += got
    return tf >> 16, json.loads(data)


def trickle(s, data, delay):
    for i in range(len(data)):
        s.sendall(data[i:i + 1])
        time.sleep(delay)


def trickle_server(portfile, delay=0.2):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(ls.getsockname()[1]))
    os.rename(tmp, portfile)
    hello = frame(HELLO, {"proto": 1, "auth": "none", "nonce": "00" * 32})
    while True:
        c, _ = ls.accept()
        try:
            trickle(c, hello, delay)
            time.sleep(3600)
        except OSError:
            pass
        c.close()


def handshake(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    t, hello = recv_frame(s)
    assert t == HELLO, t
    s.sendall(frame(AUTH, {"proto": 1, "nonce": "11" * 32}))
    t, _ = recv_frame(s)
    assert t == WELCOME, t
    return s


def silent_client(port):
    s = handshake(port)
    s.sendall(frame(REQUEST, {"transport": "tcp", "mode": "msg", "max_msg": 64, "window": 1,
                              "timeout_ms": 3600000, "busy_poll": False, "check": False,
                              "flows": ["pingpong"]}))
    t0 = time.monotonic()
    t, _ = recv_frame(s)
    assert t == ACCEPT, t
    s.settimeout(120)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    print("accepted; closed after %.1f s" % (time.monotonic() - t0), flush=True)


def trickle_client(port, delay=0.2):
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    recv_frame(s)
    t0 = time.monotonic()
    try:
        trickle(s, frame(AUTH, {"proto": 1, "nonce": "11" * 32}), delay)
        s.settimeout(120)
        while s.recv(4096):
            pass
    except OSError:
        pass
    print("closed after %.1f s" % (time.monotonic() - t0), flush=True)


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "trickle-server":
        trickle_server(args[0], *(float(a) for a in args[1:]))
    elif mode == "silent-client":
        silent_client(int(args[0]))
    elif mode == "trickle-client":
        trickle_client(int(args[0]), *(float(a) for a in args[1:]))
    else:
        sys.exit("unknown mode " + mode)
