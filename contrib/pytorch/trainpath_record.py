"""Record a PyTorch DistributedDataParallel job as a trainpath workload file.

    import trainpath_record
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25)
    rec = trainpath_record.Recorder(ddp, optimizer,
                                    sample_bytes=x[0].numel() * x[0].element_size())
    for x, y in loader:
        with rec.step(samples=len(x)):
            loss = loss_fn(ddp(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    rec.write("workload.json")          # rank 0 writes; the others return

Then `trainpath step --workload workload.json` replays it over real ranks
(docs/workload.md). What is recorded: the parameters' names, shapes and
dtypes; DDP's buckets as its reducer fires them (index 0 first), with their
bytes and parameters, from a communication hook that wraps the default
allreduce; per step, the forward (the DDP module's forward hooks), the
backward up to each bucket's readiness, the optimizer step (a wrapper
around optimizer.step), and the allreduce of each bucket; the samples per
step and their size; the state-dict bytes of the model and the optimizer
(a checkpoint's size). Only shapes, sizes and times: no weight, gradient
or sample leaves the process.

The first step is not recorded: DDP rebuilds its buckets after it, in the
order the gradients became ready. Run with torch 1.13 (Debian 12's
python3-torch); later releases keep the hooks it uses but were not tried.
A communication hook replaces the default
allreduce with the same one (averaging, as DDP does), so the job trains
the same. Timings are rank 0's.
"""

import contextlib
import json
import os
import socket
import time

import torch
import torch.distributed as dist

VERSION = 1


def _now():
    return time.perf_counter_ns()


class Recorder:
    """Hooks one DDP model (and its optimizer) and keeps what a workload file needs."""

    def __init__(self, ddp, optimizer, sample_bytes, skip_steps=1):
        self.ddp = ddp
        self.opt = optimizer
        self.sample_bytes = int(sample_bytes)
        self.skip = int(skip_steps)
        self.world = dist.get_world_size()
        self.rank = dist.get_rank()
        self.names = {id(p): n for n, p in ddp.module.named_parameters()}
        self.steps = []  # per recorded step: a dict of times
        self.buckets = {}  # index -> {"bytes", "dtype", "parameters"}
        self.seen = 0
        self.cur = None
        ddp.register_forward_pre_hook(self._fwd_begin)
        ddp.register_forward_hook(self._fwd_end)
        ddp.register_comm_hook(self, Recorder._hook)
        step = optimizer.step

        def timed_step(*a, **k):
            t0 = _now()
            r = step(*a, **k)
            if self.cur is not None:
                self.cur["optimizer_ns"] = _now() - t0
            return r

        optimizer.step = timed_step

    # ---- hooks ----

    def _fwd_begin(self, module, inputs):
        if self.cur is not None:
            self.cur["fwd0"] = _now()

    def _fwd_end(self, module, inputs, output):
        if self.cur is not None:
            self.cur["fwd1"] = _now()

    @staticmethod
    def _hook(self, bucket):
        """DDP's default allreduce (sum, then divide by the world size), timed."""
        t = _now()
        buf = bucket.buffer()
        i = bucket.index()
        cur = self.cur
        if cur is not None:
            cur["ready"][i] = t
            if i not in self.buckets:
                params = bucket.parameters() if hasattr(bucket, "parameters") else []
                self.buckets[i] = {
                    "bytes": buf.numel() * buf.element_size(),
                    "dtype": str(buf.dtype).replace("torch.", ""),
                    "parameters": [self.names.get(id(p), "?") for p in params],
                }
        buf.div_(self.world)
        fut = dist.all_reduce(buf, async_op=True).get_future()

        def done(f):
            if cur is not None:
                cur["done"][i] = _now()
            return f.value()[0]

        return fut.then(done)

    # ---- steps ----

    @contextlib.contextmanager
    def step(self, samples):
        """One training step: forward, backward and optimizer step inside."""
        record = self.seen >= self.skip
        self.cur = {"ready": {}, "done": {}, "samples": int(samples)} if record else None
        t0 = _now()
        try:
            yield
        finally:
            cur = self.cur
            self.cur = None
            self.seen += 1
            if cur is not None and "fwd0" in cur and "fwd1" in cur and cur["ready"]:
                cur["step_ns"] = _now() - t0
                self.steps.append(cur)

    # ---- the file ----

    def workload(self):
        if not self.steps:
            raise RuntimeError("trainpath_record: no step recorded (the first %d are skipped)" % self.skip)
        order = sorted(self.buckets)
        steps = {"forward_ns": [], "backward_ns": [], "optimizer_ns": [], "step_ns": []}
        ready = {i: [] for i in order}
        comm = {i: [] for i in order}
        for s in self.steps:
            if sorted(s["ready"]) != order:
                continue  # a step that fired other buckets (DDP still rebuilding)
            f1 = s["fwd1"]
            steps["forward_ns"].append(f1 - s["fwd0"])
            steps["backward_ns"].append(max(s["ready"].values()) - f1)
            steps["optimizer_ns"].append(s.get("optimizer_ns", 0))
            steps["step_ns"].append(s["step_ns"])
            for i in order:
                ready[i].append(s["ready"][i] - f1)
                comm[i].append(s["done"].get(i, s["ready"][i]) - s["ready"][i])
        params = []
        for n, p in self.ddp.module.named_parameters():
            params.append({"name": n, "shape": list(p.shape), "dtype": str(p.dtype).replace("torch.", ""),
                           "bytes": p.numel() * p.element_size(), "trainable": bool(p.requires_grad)})
        state = 0
        for t in list(self.ddp.module.state_dict().values()):
            if torch.is_tensor(t):
                state += t.numel() * t.element_size()
        for st in self.opt.state.values():
            for t in st.values():
                if torch.is_tensor(t):
                    state += t.numel() * t.element_size()
        samples = [s["samples"] for s in self.steps]
        return {
            "trainpath_workload": VERSION,
            "source": "pytorch-ddp",
            "recorded": {
                "torch": torch.__version__, "backend": dist.get_backend(), "world_size": self.world,
                "rank": self.rank, "host": socket.gethostname(), "pid": os.getpid(),
                "steps": len(steps["step_ns"]), "skipped_steps": self.skip,
                "bucket_cap_mb": getattr(self.ddp, "bucket_bytes_cap", 0) / 1048576,
            },
            "model": {"parameters": params, "parameter_bytes": sum(p["bytes"] for p in params)},
            "buckets": [dict(index=i, ready_ns=ready[i], allreduce_ns=comm[i], **self.buckets[i]) for i in order],
            "steps": steps,
            "batch": {"samples_per_rank": max(set(samples), key=samples.count), "sample_bytes": self.sample_bytes},
            "checkpoint": {"bytes": state},
        }

    def write(self, path):
        """Rank 0 writes the workload file (atomically); every rank must call it."""
        doc = self.workload()
        if self.rank != 0:
            return None
        tmp = "%s.tmp.%d" % (path, os.getpid())
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
        return doc
