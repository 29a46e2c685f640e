#!/usr/bin/python3
"""What Kubernetes would run for a pod of contrib/kubernetes' manifests, for
tests/integration/contrib/: the container's command and arguments and its
environment as the kubelet makes them, with no cluster.

  k8s_pod.py check MANIFEST...
      the manifests' consistency, as lines "ok|WHAT" or "not ok|WHAT|WHY":
      what makes the rendezvous work (Indexed Job, headless Service,
      subdomain, MASTER_ADDR, RANK from the completion index, WORLD_SIZE,
      the DNS policy on the host network, the key from a Secret);
  k8s_pod.py pod MANIFEST KIND INDEX --node NAME --ip ADDR --root DIR
                 [--key FILE] [--set NAME=VALUE]... [--trainpath BIN]
      writes DIR/pod.sh: a script that starts the container's command with
      the environment Kubernetes gives it (the manifest's env with its
      downward API fields resolved for this pod, JOB_COMPLETION_INDEX for an
      Indexed Job's pod, HOSTNAME, the image's PATH) and nothing else (env
      -i). The volumes: each is a folder DIR/vol/NAME; a Secret's is laid
      out as the kubelet's atomic writer does (the file a symlink through
      ..data into a timestamped folder, mode defaultMode). A mountPath the
      command, arguments or values name is replaced there by its folder (a
      mount cannot be made where this host has no folder, and should not be
      over one it uses); one they do not name but the program uses (validate's
      scratch under /var/tmp) is bind-mounted over inside the pod's own mount
      namespace (the caller gives it one: `ip netns exec` or `unshare -m`),
      never over the pod's folder or the binary's. --set changes an env value the manifest
      has (a name it lacks is an error: the test must not silently stop
      overriding a knob that was renamed). --trainpath: the binary the
      image's `trainpath` stands for (a folder of DIR put first on PATH).
      With --hosts, pod.sh also sets the hostname (the pod runs on the host
      network: the node's) and bind-mounts DIR/hosts over /etc/hosts, which
      the caller writes, and a resolv.conf whose nameserver refuses at once
      over /etc/resolv.conf (the cluster DNS says "no such name" at once).

The kubelet expands $(NAME) in command, args and env values when NAME is an
earlier variable of the container; `check` fails on any such reference, since
this reproduction does not expand them.
"""
import argparse
import os
import re
import shlex
import sys
import time

import yaml

JOB_UID = "0b6c7a52-5d0e-4c7a-9a61-1f6f3d2e8b10"
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def load(paths):
    docs = []
    for p in paths:
        with open(p) as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    return docs


def find(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def workload(docs, kind):
    w = find(docs, kind)
    if len(w) != 1:
        sys.exit("k8s_pod.py: want one %s, found %d" % (kind, len(w)))
    return w[0]


def pod_template(w):
    return w["spec"]["template"]


def container(w):
    cs = pod_template(w)["spec"]["containers"]
    if len(cs) != 1:
        sys.exit("k8s_pod.py: want one container, found %d" % len(cs))
    return cs[0]


def env_list(c):
    return c.get("env", [])


def env_value(c, name):
    for e in env_list(c):
        if e["name"] == name:
            return e
    return None


def field_value(path, w, index, node, ip, ns):
    """A downward API fieldRef as the kubelet resolves it for this pod."""
    name = w["metadata"]["name"]
    labels = dict(pod_template(w).get("metadata", {}).get("labels", {}))
    annotations = dict(pod_template(w).get("metadata", {}).get("annotations", {}))
    if w["kind"] == "Job":
        # what the Job controller puts on its pods (Kubernetes >= 1.27 both
        # the legacy and the batch.kubernetes.io/ names)
        for k in ("job-name", "batch.kubernetes.io/job-name"):
            labels[k] = name
        for k in ("controller-uid", "batch.kubernetes.io/controller-uid"):
            labels[k] = JOB_UID
        if w["spec"].get("completionMode") == "Indexed":
            annotations["batch.kubernetes.io/job-completion-index"] = str(index)
            labels["batch.kubernetes.io/job-completion-index"] = str(index)
    m = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if m:
        src = labels if m.group(1) == "labels" else annotations
        if m.group(2) not in src:
            # the kubelet gives "" for a key the pod lacks; a test that
            # relied on it would measure nothing: refuse
            sys.exit("k8s_pod.py: %s: the pod has no such key" % path)
        return src[m.group(2)]
    simple = {
        "metadata.name": "%s-%d-x7k2p" % (name, index) if w["kind"] == "Job" else name + "-x7k2p",
        "metadata.namespace": ns,
        "spec.nodeName": node,
        "status.hostIP": ip,
        # on the host network the pod's address is the node's
        "status.podIP": ip if pod_template(w)["spec"].get("hostNetwork") else None,
    }
    if simple.get(path) is None:
        sys.exit("k8s_pod.py: fieldRef %s is not reproduced here" % path)
    return simple[path]


# ---- check ----

def check(paths):
    docs = load(paths)
    out = []

    def say(ok, what, why=""):
        out.append(("ok|%s" % what) if ok else ("not ok|%s|%s" % (what, why)))

    for w in find(docs, "Job") + find(docs, "DaemonSet"):
        spec = pod_template(w)["spec"]
        c = container(w)
        kind = w["kind"]
        if spec.get("hostNetwork"):
            say(spec.get("dnsPolicy") == "ClusterFirstWithHostNet",
                "%s: on the host network with dnsPolicy ClusterFirstWithHostNet" % kind,
                "dnsPolicy is %r: the pod would get the node's resolv.conf, not the cluster's DNS"
                % spec.get("dnsPolicy"))
        names = [e["name"] for e in env_list(c)]
        text = " ".join(c.get("command", []) + c.get("args", []) +
                        [e.get("value", "") for e in env_list(c)])
        refs = sorted({r for r in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", text) if r in names})
        say(not refs, "%s: no $(VAR) the kubelet would expand in command, args or values" % kind,
            "the kubelet would replace $(%s)" % ", $(".join(refs))
        vols = {v["name"]: v for v in spec.get("volumes", [])}
        mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
        say(set(mounts) <= set(vols), "%s: every volumeMount names a volume" % kind,
            "no volume for %s" % sorted(set(mounts) - set(vols)))
        say(re.fullmatch(r"[^:]+:\d+\.\d+\.\d+", c.get("image", "")) is not None,
            "%s: the image is pinned to a version (%s)" % (kind, c.get("image")),
            "image %r" % c.get("image"))

    for w in find(docs, "Job"):
        spec, js = pod_template(w)["spec"], w["spec"]
        c = container(w)
        name = w["metadata"]["name"]
        svcs = [s for s in find(docs, "Service") if s["metadata"]["name"] == spec.get("subdomain")]
        say(js.get("completionMode") == "Indexed", "Job: completionMode Indexed",
            "completionMode %r" % js.get("completionMode"))
        ws = (env_value(c, "WORLD_SIZE") or {}).get("value")
        say(js.get("completions") == js.get("parallelism") and str(js.get("completions")) == ws,
            "Job: completions = parallelism = WORLD_SIZE (%s)" % ws,
            "completions %r, parallelism %r, WORLD_SIZE %r: every rank must run at once" %
            (js.get("completions"), js.get("parallelism"), ws))
        say(len(svcs) == 1, "Job: subdomain %r names a Service of the file" % spec.get("subdomain"),
            "no Service named %r" % spec.get("subdomain"))
        if svcs:
            s = svcs[0]
            say(s["spec"].get("clusterIP") == "None", "Service: headless (clusterIP None)",
                "clusterIP %r" % s["spec"].get("clusterIP"))
            sel = s["spec"].get("selector", {})
            pod_labels = dict(pod_template(w).get("metadata", {}).get("labels", {}),
                              **{"job-name": name, "batch.kubernetes.io/job-name": name})
            say(sel and all(pod_labels.get(k) == v for k, v in sel.items()),
                "Service: its selector picks the Job's pods (%s)" % sel,
                "selector %r, the pods' labels %r" % (sel, pod_labels))
            want = "%s-0.%s" % (name, s["metadata"]["name"])
            ma = (env_value(c, "MASTER_ADDR") or {}).get("value")
            say(ma == want, "Job: MASTER_ADDR is pod 0's record, %s" % want, "MASTER_ADDR %r" % ma)
        rank = (env_value(c, "RANK") or {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        say(rank == "metadata.annotations['batch.kubernetes.io/job-completion-index']",
            "Job: RANK from the completion index (downward API)", "RANK from %r" % rank)
        say(pod_template(w)["spec"].get("restartPolicy") == "Never" and js.get("backoffLimit") == 0,
            "Job: not retried (restartPolicy Never, backoffLimit 0)",
            "a rank restarted alone would meet nobody")
        keyvols = [v for v in spec.get("volumes", []) if "secret" in v]
        mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
        ok = len(keyvols) == 1 and mounts.get(keyvols[0]["name"], {}).get("readOnly") is True
        say(ok, "Job: the key is a Secret mounted read-only", "secret volumes %r" % keyvols)
        if ok:
            mp = mounts[keyvols[0]["name"]]["mountPath"]
            args = " ".join(c.get("command", []) + c.get("args", []))
            m = re.search(r"--key-file\s+(\S+)", args)
            say(m is not None and m.group(1).startswith(mp + "/"),
                "Job: --key-file is a file of the Secret's mount (%s)" % (m.group(1) if m else None),
                "--key-file %r, the Secret at %s" % (m.group(1) if m else None, mp))
            mode = keyvols[0]["secret"].get("defaultMode")
            say(mode is not None and mode & 0o077 == 0,
                "Job: the key file readable by its owner only (defaultMode %s)" %
                (oct(mode) if mode is not None else None),
                "defaultMode %r: trainpath warns about a key others can read" % mode)
    images = {container(w)["image"] for w in find(docs, "Job") + find(docs, "DaemonSet")}
    say(len(images) == 1, "one image for every workload (%s)" % ", ".join(sorted(images)),
        "images %s" % sorted(images))
    # the textfile folder: the same on the host for every workload
    tf = set()
    for w in find(docs, "Job") + find(docs, "DaemonSet"):
        for v in pod_template(w)["spec"].get("volumes", []):
            if v["name"] == "textfile":
                tf.add(v["hostPath"]["path"])
    say(len(tf) == 1, "one textfile folder on the nodes (%s)" % ", ".join(sorted(tf)),
        "textfile hostPaths %s" % sorted(tf))
    print("\n".join(out))


# ---- pod ----

def secret_volume(dst, secret, key_file):
    """The kubelet's atomic writer: DIR/..TIMESTAMP/KEY, DIR/..data ->
    ..TIMESTAMP, DIR/KEY -> ..data/KEY; files mode defaultMode (0644)."""
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.000000001", time.gmtime())
    os.makedirs(os.path.join(dst, stamp))
    with open(key_file) as f:
        key = f.read()
    items = secret.get("items") or [{"key": "key", "path": "key"}]
    for it in items:
        p = os.path.join(dst, stamp, it["path"])
        with open(p, "w") as f:
            f.write(key)
        os.chmod(p, it.get("mode", secret.get("defaultMode", 0o644)))
        os.symlink(os.path.join("..data", it["path"]), os.path.join(dst, it["path"]))
    os.symlink(stamp, os.path.join(dst, "..data"))


def pod(a):
    docs = load([a.manifest])
    w = workload(docs, a.kind)
    c = container(w)
    spec = pod_template(w)["spec"]
    # the objects name no namespace: the one they are applied in
    ns = w["metadata"].get("namespace", "trainpath")
    root = os.path.abspath(a.root)
    os.makedirs(os.path.join(root, "vol"), exist_ok=True)

    # volumes: a folder each; a mountPath the command or a value names is
    # replaced there by the folder, one it does not name is bind-mounted
    text = " ".join(c.get("command", []) + c.get("args", []) +
                    [str(e.get("value", "")) for e in env_list(c)])
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    binds, subst = [], []
    for m in c.get("volumeMounts", []):
        v = vols[m["name"]]
        d = os.path.join(root, "vol", m["name"])
        if "secret" in v:
            if not a.key:
                sys.exit("k8s_pod.py: the Secret volume %s needs --key" % m["name"])
            secret_volume(d, v["secret"], a.key)
        else:
            # emptyDir, hostPath (this pod's node's folder), an optional
            # ConfigMap that is absent: an empty folder
            os.makedirs(d, exist_ok=True)
        if re.search(r"(?<![\w./-])" + re.escape(m["mountPath"]) + r"(?=[/\"'\s]|$)", text):
            subst.append((m["mountPath"], d))
        elif os.path.isdir(m["mountPath"]):
            # used without being named (validate's scratch under /var/tmp):
            # only a mount puts the volume there
            for keep in (root, os.path.dirname(os.path.abspath(a.trainpath or root))):
                if (keep + "/").startswith(m["mountPath"].rstrip("/") + "/"):
                    sys.exit("k8s_pod.py: mounting over %s would hide %s" % (m["mountPath"], keep))
            binds.append((d, m["mountPath"]))
    # one pass (a replacement is never replaced again), longest first, whole
    # path components only
    subst.sort(key=lambda s: -len(s[0]))
    to = dict(subst)
    pat = re.compile(r"(?<![\w./-])(" + "|".join(re.escape(mp) for mp, _ in subst) +
                     r")(?=[/\"'\s]|$)") if subst else None

    def replace(s):
        return pat.sub(lambda m: to[m.group(1)], s) if pat else s

    sets = dict(kv.split("=", 1) for kv in a.set or [])
    unknown = set(sets) - {e["name"] for e in env_list(c)}
    if unknown:
        sys.exit("k8s_pod.py: --set %s: the manifest has no such variable" % ", ".join(sorted(unknown)))
    env = []
    if w["kind"] == "Job" and w["spec"].get("completionMode") == "Indexed":
        env.append(("JOB_COMPLETION_INDEX", str(a.index)))
    for e in env_list(c):
        if e["name"] in sets:
            val = sets[e["name"]]
        elif "value" in e:
            val = str(e["value"])
        else:
            val = field_value(e["valueFrom"]["fieldRef"]["fieldPath"], w, a.index, a.node, a.ip, ns)
        env.append((e["name"], replace(val)))
    path = IMAGE_PATH
    if a.trainpath:
        b = os.path.join(root, "bin")
        os.makedirs(b, exist_ok=True)
        if not os.path.exists(os.path.join(b, "trainpath")):
            os.symlink(os.path.abspath(a.trainpath), os.path.join(b, "trainpath"))
        path = b + ":" + path
    env += [("PATH", path), ("HOME", "/root"), ("HOSTNAME", a.node)]
    argv = [replace(x) for x in c.get("command", []) + c.get("args", [])]
    if not argv:
        sys.exit("k8s_pod.py: the container has no command (the image's entrypoint is not reproduced)")

    lines = ["#!/bin/sh", "# generated by k8s_pod.py: %s %s, pod %d on %s" %
             (a.kind, w["metadata"]["name"], a.index, a.node), "set -e"]
    if a.hosts:
        lines += ["hostname %s" % shlex.quote(a.node),
                  "mount --bind %s /etc/hosts" % shlex.quote(os.path.join(root, "hosts"))]
        # the cluster DNS answers a name it does not have (pod 0's record
        # before pod 0 runs) at once; this host's nameserver, unreachable
        # from the namespace, would take seconds a lookup: a nameserver on
        # the namespace's own loopback, where none listens, refuses at once
        with open(os.path.join(root, "resolv.conf"), "w") as f:
            f.write("nameserver 127.0.0.1\n")
        lines.append("mount --bind %s /etc/resolv.conf" %
                     shlex.quote(os.path.join(root, "resolv.conf")))
    for d, mp in binds:
        lines.append("mount --bind %s %s" % (shlex.quote(d), shlex.quote(mp)))
    lines.append("exec env -i " + " ".join(shlex.quote("%s=%s" % kv) for kv in env) + " \\\n    " +
                 " ".join(shlex.quote(x) for x in argv))
    with open(os.path.join(root, "pod.sh"), "w") as f:
        f.write("\n".join(lines) + "\n")
    # for the test: where each mountPath went
    with open(os.path.join(root, "mounts"), "w") as f:
        for m in c.get("volumeMounts", []):
            f.write("%s %s\n" % (m["mountPath"], os.path.join(root, "vol", m["name"])))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("manifest", nargs="+")
    p = sub.add_parser("pod")
    p.add_argument("manifest")
    p.add_argument("kind", choices=["Job", "DaemonSet"])
    p.add_argument("index", type=int)
    p.add_argument("--node", required=True)
    p.add_argument("--ip", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--key")
    p.add_argument("--set", action="append")
    p.add_argument("--trainpath")
    p.add_argument("--hosts", action="store_true")
    a = ap.parse_args()
    if a.cmd == "check":
        check(a.manifest)
    else:
        pod(a)


if __name__ == "__main__":
    main()
