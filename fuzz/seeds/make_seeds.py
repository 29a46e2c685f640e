#!/usr/bin/env python3
"""make_seeds.py [OUT]: the starting inputs of every harness in fuzz/, from
real inputs in the tree, written as OUT/NAME/seed-* (default: a folder to
merge from; the committed corpora in fuzz/corpus are what fuzzing and
`libFuzzer -merge=1` made of these). Run from anywhere:

    fuzz/seeds/make_seeds.py /tmp/seeds
    build-fuzz/fuzz/fuzz_plan -merge=1 fuzz/corpus/plan /tmp/seeds/plan

Sources: docs/examples (plan, policy, fleet), docs/report.md (thresholds),
tests/fixtures/check (fact snapshots), fuzz/seeds/report (result documents
made by `trainpath`, lists cut to three items), and protocol frames built
here. Each harness's own comment says what its input is."""
import hashlib
import hmac
import json
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build-fuzz', 'seeds')
DOCS = os.path.join(HERE, 'report')


def read(rel):
    with open(os.path.join(ROOT, rel), 'rb') as f:
        return f.read()


def put(name, i, data):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, 'seed-%03d' % i), 'wb') as f:
        f.write(data)


def docs():
    out = {}
    for n in sorted(os.listdir(DOCS)):
        with open(os.path.join(DOCS, n), 'rb') as f:
            out[n[:-5]] = f.read()
    return out


# ---- wire and auth: frames as include/tp/wire.h lays them out ----

MAGIC = 0x54504331
TYPES = {'HELLO': 1, 'AUTH': 2, 'WELCOME': 3, 'BUSY': 4, 'REJECT': 5, 'REQUEST': 6,
         'ACCEPT': 7, 'CONNECT': 8, 'RUN': 9, 'DONE': 10, 'STOP': 11, 'ERROR': 12,
         'BYE': 13, 'JOIN': 14, 'GROUP': 15, 'GATHER': 16, 'TIME': 17}


def frame(t, body, magic=MAGIC, flags=0, length=None):
    p = body if isinstance(body, bytes) else json.dumps(body, separators=(',', ':')).encode()
    n = len(p) if length is None else length
    return struct.pack('>III', magic, (TYPES.get(t, t) << 16) | flags, n) + p


def wire():
    good = [
        frame('HELLO', {'proto': 1, 'version': '0.1.0', 'auth': 'none', 'nonce': '00' * 32}),
        frame('AUTH', {'proto': 1, 'nonce': 'ab' * 32, 'mac': 'cd' * 32}),
        frame('WELCOME', {}),
        frame('BUSY', {'message': 'another test'}),
        frame('REJECT', {'message': 'wrong key'}),
        frame('REQUEST', {'test': 'lat', 'size': 8, 'port': 7471, 'transport': 'tcp'}),
        frame('ACCEPT', {'port': 40000, 'host': '127.0.0.1'}),
        frame('RUN', {'phase': 1, 'duration_ns': 1000000000}),
        frame('DONE', {'rank': 3, 'cpu': {'user': 0.5}}),
        frame('ERROR', {'code': 'timeout', 'message': 'peer 10.0.0.1:7471 did not answer'}),
        frame('ERROR', {'code': 'nonsense', 'message': 'x'}),
        frame('JOIN', {'rank': 1, 'size': 4, 'host': 'node1'}),
        frame('GATHER', {'rank': 2, 'text': 'caf\u00e9 \u2014 ok'}),
        frame('BYE', {}),
    ]
    bad = [
        frame('HELLO', {}, magic=0x48545450),                 # "HTTP"
        frame(0, {}), frame(18, {}), frame('RUN', {}, flags=1),
        frame('RUN', b'{}', length=65537),                      # over the limit
        frame('RUN', b'{"a":1', length=6),                      # not JSON
        frame('RUN', b'[1,2]'), frame('RUN', b'{"a":1,"a":2}'),  # not an object; duplicate
        frame('RUN', b'{"s":"a\\u0000b"}'),                     # NUL inside a string
        frame('RUN', b'{"proto":-1,"size":18446744073709551615}'),
        frame('RUN', b'{}', length=100),                        # payload cut short
        b'TPC1', b'',
    ]
    for i, f in enumerate(good + bad):
        put('wire', i, f)
    put('wire', 100, b''.join(good))


KEY = b'fuzzing-key-0123456789abcdef-32b'   # fuzz_auth.c's KEY
FIXED = bytes(range(32))                     # every nonce from fuzz_auth.c's random source


def mac(label, a, b):
    return hmac.new(KEY, label + a + b, hashlib.sha256).hexdigest()


def auth():
    cn = bytes([0xa5] * 32)                   # the client nonce we send the server
    sn = bytes([0x5a] * 32)                   # the server nonce we send the client
    seeds = [
        # server side (byte 0: bit 0 clear), no key, then with the key
        b'\x00' + frame('AUTH', {'proto': 1, 'nonce': cn.hex()}),
        b'\x02' + frame('AUTH', {'proto': 1, 'nonce': cn.hex(),
                                 'mac': mac(b'trainpath-client', FIXED, cn)}),
        b'\x02' + frame('AUTH', {'proto': 1, 'nonce': cn.hex(), 'mac': '00' * 32}),
        b'\x02' + frame('AUTH', {'proto': 1, 'nonce': cn.hex()}),
        b'\x00' + frame('AUTH', {'proto': 2, 'nonce': cn.hex()}),
        b'\x00' + frame('AUTH', {'proto': 1, 'nonce': 'zz' * 32}),
        b'\x00' + frame('ERROR', {'code': 'usage', 'message': 'no'}),
        # client side (bit 0 set)
        b'\x01' + frame('HELLO', {'proto': 1, 'version': '0.1.0', 'auth': 'none',
                                  'nonce': sn.hex()}) + frame('WELCOME', {}),
        b'\x03' + frame('HELLO', {'proto': 1, 'version': '0.1.0', 'auth': 'hmac-sha256',
                                  'nonce': sn.hex()})
        + frame('WELCOME', {'mac': mac(b'trainpath-server', FIXED, sn)}),
        b'\x03' + frame('HELLO', {'proto': 1, 'version': '0.1.0', 'auth': 'hmac-sha256',
                                  'nonce': sn.hex()}) + frame('WELCOME', {'mac': 'ff' * 32}),
        b'\x01' + frame('HELLO', {'proto': 1, 'version': '0.1.0', 'auth': 'hmac-sha256',
                                  'nonce': sn.hex()}) + frame('REJECT', {'message': 'key'}),
        b'\x03' + frame('HELLO', {'proto': 1, 'auth': 'none', 'nonce': sn.hex()}),
        b'\x01' + frame('BUSY', {}),
        b'\x01' + frame('HELLO', {'proto': 7, 'auth': 'none', 'nonce': sn.hex()}),
    ]
    for i, s in enumerate(seeds):
        put('auth', i, s)


# ---- YAML inputs ----

MEASURED = '\n#@measured\n'                  # fuzz_plan.c's separator


def plan(d):
    base = read('docs/examples/plan.yaml').decode()
    put('plan', 0, base)
    small = """workload:
  parameters: 1B
  samples_per_gpu: 8
  compute_time: {measured: m.json}
  train_samples: 1M
cluster:
  nodes: 2
  gpus_per_node: 2
  intra_node: {latency: 3us, bandwidth: 100GB/s}
  mtbf_per_node: 1000h
prices: {gpu_hour: 2}
candidates:
  - name: a
    network: {kind: tcp, link: 25Gb/s, latency: {measured: m.json}, bandwidth: {measured: m.json}}
    storage: {kind: nfs, write_bandwidth: {measured: m.json}, commit_latency: {measured: m.json}}
  - name: b
    network: {kind: roce, link: 100Gb/s, latency: 3us, algorithm: tree}
    storage: {kind: nvme, write_bandwidth: 10GB/s, read_bandwidth: {measured: m.json}}
simulate: {steps: 10, seed: 7}
"""
    i = 1
    for key in ('step', 'net-lat', 'net-bw', 'coll', 'io-checkpoint', 'io-commit', 'io-dataset'):
        put('plan', i, small + MEASURED + d[key].decode())
        i += 1
    put('plan', i, small)
    put('plan', i + 1, 'workload: {parameters: 1B}\n')
    put('plan', i + 2, '{}')


def policy():
    put('policy', 0, read('docs/examples/policy.yaml'))
    put('policy', 1, """role: storage
multi_tenant: true
planes:
  storage:
    cidrs: [10.2.0.0/24, "fd00:2::/64"]
    interfaces: ["ens*"]
    services:
      - {name: nvmet-tcp, port: 4420}
      - {name: range, ports: 60000-60010, proto: udp}
    mtu_min: 9000
    rdma: true
  management: {cidrs: [0.0.0.0/0]}
""")
    put('policy', 2, 'planes: {data: {cidrs: [10.0.0.0/8]}, control: {cidrs: [10.1.0.0/16]}}\n')


def triage():
    ex = read('docs/examples/fleet.yaml').decode()
    put('triage', 0, ex.replace('nodes: 1024', 'nodes: 64').replace('node: 600', 'node: 60'))
    put('triage', 1, 'nodes: 8\nslow_links: [{a: 1, b: 2, severity: 30%}]\nmissing: [7]\n')
    put('triage', 2, 'nodes: 12\nnoise: 10%\ntest_noise: 2%\niters: 5\nseed: 99\n'
                     'slow_nodes: [{node: 3, severity: 0.5, collective: true}]\n'
                     'dies: [{node: 4, round: 1}, {node: 5, round: 6}]\n')
    put('triage', 3, 'nodes: 3\nslow_links: [{severity: 20%}, {severity: 20%}]\n')
    put('triage', 4, 'nodes: 2000\n')


def gate():
    text = read('docs/report.md').decode()
    blocks = re.findall(r'```yaml\n(.*?)```', text, re.S)
    i = 0
    for b in blocks:
        if 'thresholds:' in b:
            put('gate', i, b)
            i += 1
    for t in ['thresholds:\n  - {metric: coll.busbw, labels: {size: 64M, transport: "tc*"}, '
              'min: 80Gb/s, severity: warning}\n',
              'thresholds:\n  - {metric: plan.step, max: 2ms}\n  - {metric: io.commit.latency.p99,'
              ' max: 1ms}\n  - {metric: run.ok, min: 1}\n',
              'thresholds:\n  - {metric: io.checkpoint.throughput, min: 1GiB/s}\n'
              '  - {metric: coll.busbw, max: 50us}\n  - {metric: step.cov, max: 10%}\n'
              '  - {metric: check.fail, max: 0}\n  - {metric: net.lat.latency.p99, max: 1e-3s}\n']:
        put('gate', i, t)
        i += 1


# ---- result documents, fleet lines, histograms ----

def report(d):
    for i, k in enumerate(sorted(d)):
        put('report', i, d[k])


def fleet(d):
    lines = []
    for h, v in (('node1', 41.0), ('node2', 40.2), ('node3', 90.5), ('node4', 40.7)):
        lines.append({'host': h, 'metric': 'net.lat.latency.p99{size=8}', 'value': v * 1000,
                      'unit': 'ns', 'better': 'lower'})
    for a, b, v in (('node1', 'node2', 9e9), ('node2', 'node3', 4e9), ('node3', 'node4', 9.1e9),
                    ('node4', 'node1', 9.2e9)):
        lines.append({'a': a, 'b': b, 'metric': 'net.bw', 'value': v, 'unit': 'B/s',
                      'better': 'higher'})
    text = '\n'.join(json.dumps(l) for l in lines) + '\n'
    put('fleet', 0, text)
    net = json.loads(d['net-bw'])
    put('fleet', 1, json.dumps({'host': 'node1', 'doc': net}) + '\n' +
        json.dumps({'host': 'node2', 'doc': net}) + '\n')
    put('fleet', 2, json.dumps({'host': 'node5', 'rows': [
        {'key': 'check.fail', 'metric': 'check.fail', 'value': 2, 'unit': '', 'better': 'lower'}]})
        + '\n\n' + json.dumps(json.loads(d['check'])) + '\n')
    put('fleet', 3, '{"host": "a", "metric": "x", "value": 1}\nnot json\n[1]\n')


def hist(d):
    i = 0

    def walk(o):
        nonlocal i
        if isinstance(o, dict):
            if 'buckets' in o and 'sub_bits' in o and i < 12:
                put('hist', i, json.dumps(o, separators=(',', ':')))
                i += 1
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    for k in sorted(d):
        walk(json.loads(d[k]))
    big = 18446744073709551615
    put('hist', i, json.dumps({'count': 2, 'min': 0, 'max': str(big), 'mean': 9.2e18, 'm2': 1e37,
                               'sub_bits': 7, 'buckets': [[0, 1], [7423, 1]]}))
    put('hist', i + 1, '{"count":0,"min":5,"max":1,"mean":0,"m2":0,"sub_bits":7,"buckets":[]}')


# ---- fact snapshots: tests/fixtures/check mapped onto fuzz_facts.c's slots ----

def slots():
    src = open(os.path.join(ROOT, 'fuzz', 'fuzz_facts.c')).read()
    macros = dict(re.findall(r'#define (PCI|NVMET) "([^"]*)"', src))
    body = re.search(r'slots\[\] = \{(.*?)\n\};', src, re.S).group(1)
    out = []
    for line in body.splitlines():
        line = re.sub(r'/\*.*?\*/', '', line).strip().rstrip(',')
        if not line:
            continue
        for m, v in macros.items():
            line = line.replace(m + ' "', '"' + v)
        out.append(''.join(re.findall(r'"([^"]*)"', line)))
    return out


SEP = '\n~~\n'                              # fuzz_facts.c's separator


def facts():
    names = slots()
    # where each slot's content is found in a fixture (a path under it)
    fixture_of = {
        'sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/net/eth0/':
            'sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/net/eth2/',
        'sys/devices/virtual/nvme-fabrics/ctl/nvme1/': 'sys/devices/virtual/nvme-fabrics/ctl/nvme1/',
        'sys/kernel/config/nvmet/ports/1/': 'sys/kernel/config/nvmet/ports/1/',
        'sys/kernel/config/nvmet/subsystems/nqn.s1/':
            'sys/kernel/config/nvmet/subsystems/nqn.2024-01.io.example:open/',
        'sys/kernel/config/nvmet/hosts/nqn.h1/':
            'sys/kernel/config/nvmet/hosts/nqn.2014-08.org.nvmexpress:uuid:'
            '1b4e28ba-2fa1-11d2-883f-0016d3ccabcd/',
        'proc/sys/net/ipv4/conf/eth0/': 'proc/sys/net/ipv4/conf/eth2/',
    }
    for n, fx in enumerate(('node-rdma', 'target-open')):
        base = os.path.join(ROOT, 'tests', 'fixtures', 'check', fx)
        parts = ['eth7\nib0.8001\n' if n == 0 else '']
        for s in names[1:]:
            link = s.startswith('@')
            s = s.lstrip('@')
            rel = s
            for a, b in fixture_of.items():
                if s.startswith(a):
                    rel = b + s[len(a):]
            p = os.path.join(base, rel)
            if link and os.path.islink(p):
                parts.append(os.readlink(p))
            elif os.path.isfile(p):
                with open(p, 'rb') as f:
                    parts.append(f.read().decode('latin-1'))
            elif s == 'results/api_key':
                parts.append('-----BEGIN RSA PRIVATE KEY-----\nMIIB\n' if n == 0
                             else 'c2VjcmV0LXRva2VuLWZvci10ZXN0cw==\n')
            else:
                parts.append('')
        put('facts', n, SEP.join(parts).encode('latin-1'))
    put('facts', 2, SEP.join(['lo'] + ['garbage 0x%x' % i for i in range(len(names) - 1)]))


# ---- frame bodies: fuzz_frames.c's rows, as client.c and star.c write them ----

ROWS = {'REQUEST': 0, 'CONNECT': 1, 'RUN': 2, 'JOIN': 3, 'TIME': 4, 'GROUP': 5, 'GATHER': 6,
        'PART': 7, 'ALL': 8}


def body(row, obj, a=0, b=0):
    """byte 0 the row, bytes 1 and 2 the session (fuzz_frames.c), then the
    body as tp_wire_send writes it (compact, in the order it was built)"""
    text = obj if isinstance(obj, bytes) else json.dumps(obj, separators=(',', ':')).encode()
    return bytes([ROWS[row], a, b]) + text


def request(transport='tcp', mode='msg', max_msg=8, window=1, check=False, flows=('pingpong',),
            provider=None, cuda=False):
    r = {'transport': transport, 'mode': mode, 'max_msg': max_msg, 'window': window,
         'timeout_ms': 10000, 'busy_poll': False, 'check': check, 'flows': list(flows)}
    if provider:
        r['provider'] = provider
    if cuda:
        r['mem'] = 'cuda'
    return r


def frames():
    seeds = [
        # net: lat, bw --check, bibw, loaded (a ping-pong and 4 streams), ofi rma, --mem cuda
        body('REQUEST', request(max_msg=4096)),
        body('REQUEST', request(max_msg=1048576, window=64, check=True, flows=['c2s'])),
        body('REQUEST', request(max_msg=65536, window=16, flows=['c2s', 's2c'])),
        body('REQUEST', request(max_msg=1048576, window=16, flows=['pingpong'] + ['c2s'] * 4)),
        body('REQUEST', request(transport='ofi', mode='rma', max_msg=65536, window=32,
                                provider='tcp;ofi_rxm', flows=['c2s'])),
        body('REQUEST', request(max_msg=8, cuda=True)),
        body('REQUEST', request(max_msg=1 << 30, window=4096, check=True, flows=['c2s'] * 65)),
        body('CONNECT', {'flows': ['127.0.0.1']}, a=0),
        body('CONNECT', {'flows': ['10.0.0.2', 'fe80::1%eth0']}, a=1),
        body('RUN', {'flows': [0], 'size': 8, 'count': 1000}, a=0, b=1),
        body('RUN', {'flows': [0, 1], 'size': 65536, 'count': 200}, a=1, b=8),
        body('RUN', {'flows': [1, 2, 3, 4], 'size': 1048576, 'count': 0}, a=4, b=8),
        body('RUN', {'flows': [0, 0], 'size': 8, 'count': 1}, a=1, b=1),
        # boot: a rank joins a group of 4, answers a clock probe; rank 0's group
        body('JOIN', {'rank': 1, 'size': 4, 'host': 'node1', 'pid': 4242,
                      'options': {'op': 'allreduce', 'dtype': 'float32', 'sizes': [8, 1048576],
                                  'iters': 20, 'transport': 'tcp'}}, a=2),
        body('JOIN', {'rank': 3, 'size': 8, 'host': 'node3', 'pid': 1, 'options': {}}, a=2),
        body('TIME', {'t': 1234567890123}),
        body('GROUP', {'hosts': ['node0', 'node1', 'node1', 'node2'],
                       'offsets': [0, -1532, 88, 120045], 'rtts': [0, 41250, 38990, 52000]},
             a=3),
        body('GATHER', {'data': 'tcp://10.0.0.1:40123'}),
        body('GATHER', {'data': ''}),
        body('PART', {'data': '{"rank":1,"results":{}}', 'more': False}),
        body('PART', {'data': 'caf\u00e9 ' * 8, 'more': True}),
        body('ALL', {'all': ['a0', 'a1', 'a2', 'a3']}, a=3),
        body('ALL', {'all': ['']}, a=0),
    ]
    for i, s in enumerate(seeds):
        put('frames', i, s)


# ---- histories: `trainpath report add` of the result documents ----

def history():
    """Real histories, written by the binary ($TRAINPATH, default
    build/trainpath) from fuzz/seeds/report, then rewritten with 512-byte
    pages (VACUUM keeps application_id and user_version) so that the
    fuzzer's inputs stay a few KiB. Skipped when there is no binary."""
    import sqlite3
    import subprocess
    import tempfile
    exe = os.environ.get('TRAINPATH', os.path.join(ROOT, 'build', 'trainpath'))
    if not os.access(exe, os.X_OK):
        print('history: no %s (set TRAINPATH); skipped' % exe)
        return
    tmp = tempfile.mkdtemp()
    # the documents of each history and how many keys of each run it keeps
    # (the others deleted before the VACUUM: a whole run has hundreds); the
    # last one keeps no run at all, only the schema
    sets = [(['net-lat'], 6), (['net-lat', 'net-bw', 'coll', 'step', 'io-commit'], 2),
            (['plan'], 0)]
    for i, (names, keep) in enumerate(sets):
        db = os.path.join(tmp, 'h%d.sqlite' % i)
        files = [os.path.join(DOCS, n + '.json') for n in names]
        # a second run of the first document, a day later on another host
        # and batch, so that baselines and histories have two points
        doc = json.loads(open(files[0]).read())
        doc['started_utc'] = '2031-01-02T03:04:05Z'
        doc['provenance']['host'] = 'node2'
        again = os.path.join(tmp, 'again%d.json' % i)
        with open(again, 'w') as f:
            json.dump(doc, f)
        subprocess.run([exe, 'report', 'add', '--db', db, '--batch', 'b1'] + files, check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([exe, 'report', 'add', '--db', db, again], check=True,
                       stdout=subprocess.DEVNULL)
        con = sqlite3.connect(db)
        con.execute('DELETE FROM metrics WHERE key NOT IN (SELECT key FROM metrics m2 WHERE '
                    'm2.run_id = metrics.run_id ORDER BY key LIMIT ?)', (keep,))
        if not keep:
            con.execute('DELETE FROM runs')
        con.commit()
        con.execute('PRAGMA page_size = 512')
        con.execute('VACUUM')
        con.close()
        put('history', i, open(db, 'rb').read())


def main():
    d = docs()
    wire()
    auth()
    plan(d)
    policy()
    triage()
    gate()
    report(d)
    fleet(d)
    hist(d)
    facts()
    frames()
    history()
    print('seeds in', OUT)


main()
