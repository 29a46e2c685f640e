"""Record a PyTorch training job (DDP or FSDP) as a trainpath workload file.

    import trainpath_record
    model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25)
    # or FSDP: FullyShardedDataParallel(model, ...), or fully_shard(model) (torch 2.x)
    rec = trainpath_record.Recorder(model, optimizer,
                                    sample_bytes=x[0].numel() * x[0].element_size())
    for x, y in loader:
        with rec.step(samples=len(x)):
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    rec.write("workload.json")          # every rank calls it; rank 0 writes

Then `trainpath step --workload workload.json` replays it over real ranks
(docs/workload.md). The file is version 2 (`write(path, version=1)` still
writes version 1 for a DDP job: its buckets only). Only shapes, sizes and
times leave the process: no weight, gradient or sample.

What is recorded, per recorded step:

- **Every collective the step makes through torch.distributed**, in the
  order called: its kind, bytes (the nccl-tests size: the larger of the
  whole call's input and output; an all-to-all's send buffer), dtype,
  process group and phase (forward, backward, optimizer, other); when it
  was called (`ready_ns`) and, where the process can see it, how long it
  took (`duration_ns`).
- **DDP's buckets**: DDP's reducer calls the process group from C++, out
  of Python's sight, so a communication hook (`register_comm_hook`) wraps
  the default allreduce (divide by the world size, `all_reduce`, as DDP's
  own `allreduce_hook`: the job trains the same) and names each bucket:
  its index and parameters. Its readiness is the hook's call, its duration
  the future's completion.
- **FSDP's collectives** (and any other): the torch.distributed collective
  functions are wrapped while a step is recorded (and put back after it),
  in both `torch.distributed` and `torch.distributed.distributed_c10d`:
  `all_gather_into_tensor`, `_all_gather_base`, `all_gather_single`,
  `all_gather`, `reduce_scatter_tensor`, `_reduce_scatter_base`,
  `reduce_scatter_single`, `reduce_scatter`, `all_reduce`, `broadcast`,
  `reduce`, `all_to_all_single`, `all_to_all`, `send`, `recv`, `isend`,
  `irecv` and `barrier`, each name where the installed torch has it. Why
  these: FSDP calls them by attribute at run time, `dist.<name>(...)`, so a
  wrapper there sees every call whatever the release:
  torch 1.13's FSDP `dist._all_gather_base` (flat_param.py, the flat
  parameter's all-gather, in the forward and again in the backward) and
  `dist._reduce_scatter_base` (default_hooks.reduce_scatter_hook, the
  gradient's); torch 2.x's FSDP1 `dist.all_gather_into_tensor`
  (`dist.all_gather` for a CPU flat parameter) in _flat_param.py and
  `dist.reduce_scatter_tensor` (`dist.all_reduce` for NO_SHARD and HSDP's
  second level) in _runtime_utils.py; FSDP2 (fully_shard)
  `dist.all_gather_into_tensor` and `dist.reduce_scatter_tensor(output=,
  input=)` in _fsdp_collectives.py; from torch 2.13 both FSDPs call the
  renamed `dist.all_gather_single` / `dist.reduce_scatter_single`, the old
  names forwarding to them. A call made inside another wrapped call (an
  old name forwarding to a new one, `all_gather_object`'s `all_gather`s) is
  not counted again: only the outermost is.
- **Times**, from the step's compute start (the model's forward, or the
  step's first collective if earlier): the forward up to the backward's
  start (`torch.autograd.backward`, which `Tensor.backward` calls, is
  wrapped during the step: the loss and `zero_grad` count in the forward);
  the backward up to its last collective's call (DDP's last bucket, FSDP's
  last reduce-scatter), or its end if it made none; the optimizer step
  (a wrapper around `optimizer.step`, bound to the optimizer so that an LR
  scheduler made after the recorder can still wrap it); the `with` block.
- **Durations.** A synchronous call on CPU tensors lasts until it returns;
  an asynchronous one (DDP's hook, `async_op=True`, `isend`) until its
  Work's future completes. On a GPU neither says when the work ran: the
  duration is taken from `Work._get_duration()` (torch 2.x, NCCL, with
  `TORCH_NCCL_ENABLE_TIMING=1`) for the asynchronous calls, after a device
  synchronisation at the step's end; otherwise it is missing, and
  `duration_ns` is left out of the file (`recorded.missing` says so).
  Calls inside torch's `_coalescing_manager` are queued and run at the
  block's end: recorded at their call, without a duration. The work's start
  (`start_ns`) is not seen from Python: never written.
- **The first step is skipped** (`skip_steps=1`): DDP rebuilds its buckets
  after the first iteration, FSDP records its execution order in it.
  Steps whose collectives differ are kept, each with its own layout.
- **Sizes.** Every parameter's name, shape, dtype and bytes (FSDP's flat
  parameters are read back into the original ones; FSDP2's DTensors give
  their global shapes); the samples per step (the most frequent
  `samples=`) and `sample_bytes` as given; the checkpoint's bytes: the
  model's parameters and buffers and the optimizer's state tensors (for
  flat-parameter FSDP, whose optimizer state is sharded, summed over the
  ranks).
- **Ranks.** By default the file holds the recording rank's own figures
  (`ranks`, one entry). With `Recorder(..., gather=True)` every rank's
  figures are gathered to rank 0 (`all_gather_object` over the default
  group, in `write`) and the file holds every rank, with `skew`: each
  rank's times are from its own step start, so `offset_ns` is 0;
  `arrival_ns` per collective the latest rank's readiness less the
  earliest's; `slowest_rank` per step the rank most behind over the
  step's collectives (the sum of its readiness after the earliest rank's;
  without collectives, the longest compute), as `trainpath workload
  import` has it. Every rank must make the same collectives
  (kind, bytes, dtype, group) in each step; rank 0's groups are written.

What is not seen: collectives a library makes from C++ (DDP's buffer
broadcast, `_broadcast_coalesced`), torch's functional collectives
(`torch.distributed._functional_collectives`, what torch.compile'd code
calls), `gather`/`scatter` (no kind of the file's), and calls bound to a
name before the step began (`from torch.distributed import all_reduce`).
On a GPU all times are the CPU's: when the work was queued.

Run here with Debian 12's `python3-torch` (1.13, CPU, gloo): DDP for real.
Torch 1.13's FSDP cannot run on that machine: `import
torch.distributed.fsdp` fails on Python 3.11 (a dataclass default,
TensorProperties, is unhashable), FSDP 1.13 needs CUDA ("Torch not compiled
with CUDA enabled" from `torch.cuda.current_device()` in its constructor,
and "FSDP does not support CPU only execution" at the first forward) and
gloo in 1.13 has neither `_allgather_base` nor `_reduce_scatter_base`.
The FSDP recording was run here on a job that makes the calls of each
torch's FSDP from the same places (tests/integration/contrib/recorder/
fsdp_mirror.py). Torch 2.x is not installable on that machine: on it this
module was checked against torch 2.x's source only (the list below the
imports), never run; nor on a GPU, nor with NCCL.
"""

import contextlib
import functools
import inspect
import json
import os
import socket
import threading
import time
import types

import torch
import torch.distributed as dist

VERSION = 2

# The torch APIs used here, and where torch 2.x has them (read in its source;
# none run here):
#  torch/distributed/distributed_c10d.py: get_rank(group=None),
#    get_world_size(group=None), get_backend(group=None) (a str), get_process_group_ranks(group),
#    _get_default_group(), all_gather_object(object_list, obj, group=None) - as in 1.13.
#    The collectives: all_reduce(tensor, op, group, async_op), broadcast(tensor, src, group,
#    async_op), reduce(tensor, dst, op, group, async_op), all_gather(tensor_list, tensor, group,
#    async_op), all_gather_into_tensor(output_tensor, input_tensor, group, async_op),
#    reduce_scatter(output, input_list, op, group, async_op), reduce_scatter_tensor(output,
#    input, op, group, async_op), all_to_all_single(output, input, output_split_sizes,
#    input_split_sizes, group, async_op), all_to_all(output_tensor_list, input_tensor_list,
#    group, async_op), send/recv/isend/irecv(tensor, dst|src, group, tag), barrier(group,
#    async_op, device_ids): the tensors where 1.13 has them (read by position, whatever the
#    keywords; later releases add keywords such as group_src after them). Changed:
#    _all_gather_base and _reduce_scatter_base are deprecated forwarders to the _tensor names
#    (counted once: the outermost call); torch 2.13 renames those to all_gather_single and
#    reduce_scatter_single, the old names forwarding (pytorch#186123, FSDP moved in #186124);
#    inside _coalescing_manager the calls are queued (_world.pg_coalesce_state) and return None
#    or an _IllegalWork. ProcessGroup.group_name and .group_desc replace 1.13's _pg_names.
#  Work.get_future() (gloo), Future.then/value: as in 1.13. Work._get_duration() (ms; NCCL
#    with TORCH_NCCL_ENABLE_TIMING=1, else it raises): new in 2.x.
#  torch/nn/parallel/distributed.py: DistributedDataParallel.register_comm_hook(state, hook),
#    .module, .bucket_bytes_cap; GradBucket.buffer(), .index(), .parameters()
#    (torch/csrc/distributed/c10d/init.cpp): as in 1.13.
#  torch/nn/modules/module.py: register_forward_pre_hook(hook, *, prepend=False,
#    with_kwargs=False) (prepend is new in 2.0), register_forward_hook(hook), named_parameters,
#    named_modules, buffers, state_dict.
#  torch/_tensor.py: Tensor.backward calls torch.autograd.backward(self, gradient,
#    retain_graph, create_graph, inputs=inputs) by attribute: as in 1.13.
#  torch/optim/lr_scheduler.py: LRScheduler wraps optimizer.step through step.__func__
#    (patch_track_step_called; 1.13: with_counter, __self__ and __func__), hence a bound method.
#  FSDP1 (torch/distributed/fsdp/_flat_param.py): FlatParamHandle.flat_param, FlatParameter
#    ._fqns, ._shapes, ._params (use_orig_params), the FSDP module's ._handle (1.13:
#    ._handles, ._prefixed_param_names); FSDP2's module classes derive FSDPModule and its
#    parameters are DTensors (to_local, placements; global shape).

try:
    import torch.distributed.distributed_c10d as _c10d
except ImportError:  # pragma: no cover - every torch with torch.distributed has it
    _c10d = None

# name -> (kind, index of the output argument, index of the input argument)
_COLLECTIVES = {
    "all_gather_into_tensor": ("allgather", 0, 1),
    "_all_gather_base": ("allgather", 0, 1),
    "all_gather_single": ("allgather", 0, 1),
    "all_gather": ("allgather", 0, 1),
    "reduce_scatter_tensor": ("reduce-scatter", 0, 1),
    "_reduce_scatter_base": ("reduce-scatter", 0, 1),
    "reduce_scatter_single": ("reduce-scatter", 0, 1),
    "reduce_scatter": ("reduce-scatter", 0, 1),
    "all_reduce": ("allreduce", None, 0),
    "broadcast": ("broadcast", None, 0),
    "reduce": ("reduce", None, 0),
    "all_to_all_single": ("alltoall", 0, 1),
    "all_to_all": ("alltoall", 0, 1),
    "send": ("send", None, 0),
    "isend": ("send", None, 0),
    "recv": ("recv", 0, None),
    "irecv": ("recv", 0, None),
    "barrier": ("barrier", None, None),
}

# module prefixes FSDP and activation checkpointing put in parameter names
_WRAPPER_NAMES = ("_fsdp_wrapped_module", "_fpw_module", "_checkpoint_wrapped_module")


def _now():
    return time.perf_counter_ns()


def _dtype_name(dtype):
    """torch's dtype by trainpath's names (float8_e4m3fn -> float8e4m3)."""
    name = str(dtype).replace("torch.", "")
    if name.startswith("float8_"):
        name = "float8" + name[len("float8_"):]
        if name.endswith("fn"):
            name = name[:-2]
    return name


def _tensors(x):
    if torch.is_tensor(x):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for t in x if torch.is_tensor(t)]
    return []


def _nbytes(x):
    return sum(t.numel() * t.element_size() for t in _tensors(x))


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _clean_name(name):
    parts = [p for p in name.split(".") if p and p not in _WRAPPER_NAMES]
    return ".".join(parts)


def _is_dtensor(t):
    return hasattr(t, "to_local") and hasattr(t, "placements")


class Recorder:
    """Hooks one model (DDP, FSDP or plain) and its optimizer, and keeps what a workload file needs."""

    def __init__(self, model, optimizer, sample_bytes, skip_steps=1, gather=False, source=None):
        self.model = model
        self.opt = optimizer
        self.sample_bytes = int(sample_bytes)
        self.skip = int(skip_steps)
        self.gather = bool(gather)
        self.world = dist.get_world_size()
        self.rank = dist.get_rank()
        self.ddp = isinstance(model, torch.nn.parallel.DistributedDataParallel)
        self.inner = model.module if self.ddp else model
        self.names = {id(p): n for n, p in self.inner.named_parameters()}
        self.source = source or ("pytorch-ddp" if self.ddp else
                                 "pytorch-fsdp" if self._fsdp_classes() else "pytorch")
        self.steps = []      # per recorded step: times and the list of calls
        self.groups = []     # the process groups seen, in order
        self.group_index = {}
        self.seen = 0
        self.cur = None
        self.phase = "other"
        self._tl = threading.local()
        self._saved = []     # (namespace, name, original, wrapper) while a step is recorded
        self._lock = threading.Lock()
        self._register_pre_hook(model)
        model.register_forward_hook(self._fwd_end)
        if self.ddp:
            model.register_comm_hook(self, Recorder._hook)
        step = optimizer.step

        def timed_step(opt, *a, **k):
            cur = self.cur
            t0 = _now()
            prev, self.phase = self.phase, "optimizer"
            try:
                return step(*a, **k)
            finally:
                self.phase = prev
                if cur is not None:
                    cur["optimizer_ns"] = cur.get("optimizer_ns", 0) + _now() - t0

        # a bound method, as optimizer.step is: LR schedulers wrap it through
        # its __self__ and __func__ (torch.optim.lr_scheduler, 1.13 and 2.x)
        optimizer.step = types.MethodType(timed_step, optimizer)

    def _fsdp_classes(self):
        for m in self.model.modules():
            for c in type(m).__mro__:
                if c.__name__ in ("FullyShardedDataParallel", "FSDPModule"):
                    return True
        return False

    def _register_pre_hook(self, model):
        # first of the pre-hooks: FSDP2 puts its all-gather in a pre-hook it
        # registers with prepend=True (torch >= 2.0 has the argument)
        try:
            model.register_forward_pre_hook(self._fwd_begin, prepend=True)
        except TypeError:
            model.register_forward_pre_hook(self._fwd_begin)

    # ---- hooks ----

    def _fwd_begin(self, module, inputs):
        cur = self.cur
        if cur is not None:
            if "fwd0" not in cur:
                cur["fwd0"] = _now()
            self.phase = "forward"

    def _fwd_end(self, module, inputs, output):
        cur = self.cur
        if cur is not None:
            cur["fwd1"] = _now()

    @staticmethod
    def _hook(self, bucket):
        """DDP's default allreduce (divide by the world size, then sum), timed and named."""
        t = _now()
        buf = bucket.buffer()
        i = bucket.index()
        if self.cur is not None:
            params = bucket.parameters() if hasattr(bucket, "parameters") else []
            self._tl.note = {"ready": t, "bucket": i,
                             "parameters": [self.names.get(id(p), "?") for p in params]}
        buf.div_(self.world)
        try:
            fut = dist.all_reduce(buf, async_op=True).get_future()
        finally:
            self._tl.note = None
        return fut.then(lambda f: f.value()[0])

    # ---- the collectives ----

    def _group(self, group):
        """The index into self.groups of a process group (None: the default one); -1 if unknown."""
        try:
            default = _c10d._get_default_group()
            pg = group if group is not None else default
            if pg in self.group_index:
                return self.group_index[pg]
            ranks = [int(r) for r in dist.get_process_group_ranks(pg)]
        except Exception:  # a group this torch cannot describe: the file says -1
            return -1
        name = desc = None
        try:  # torch 2.x: ProcessGroup.group_name, .group_desc; 1.13: distributed_c10d._pg_names
            name = getattr(pg, "group_name", None) or getattr(_c10d, "_pg_names", {}).get(pg)
            desc = getattr(pg, "group_desc", None)
        except Exception:
            pass
        with self._lock:
            if pg not in self.group_index:
                self.group_index[pg] = len(self.groups)
                self.groups.append({"name": str(name or ("0" if pg is default else len(self.groups))),
                                    "desc": str(desc or ("default_pg" if pg is default else "")),
                                    "size": len(ranks), "ranks": ranks})
            return self.group_index[pg]

    def _coalescing(self, group):
        world = getattr(_c10d, "_world", None)
        state = getattr(world, "pg_coalesce_state", None) or getattr(_c10d, "_pg_coalesce_state", None)
        if not state:
            return False
        try:
            pg = group if group is not None else _c10d._get_default_group()
            return pg in state
        except Exception:
            return True

    def _describe(self, kind, sig, oi, ii, args, kwargs):
        if sig is not None:
            try:
                ba = sig.bind(*args, **kwargs)
            except TypeError:
                return None  # the call itself will say what is wrong
            names = list(sig.parameters)
            val = ba.arguments.get
            out = val(names[oi]) if oi is not None and oi < len(names) else None
            inp = val(names[ii]) if ii is not None and ii < len(names) else None
            group = val("group")
        else:
            out = args[oi] if oi is not None and oi < len(args) else None
            inp = args[ii] if ii is not None and ii < len(args) else None
            group = kwargs.get("group")
        first = (_tensors(inp) or _tensors(out) or [None])[0]
        if kind == "alltoall":
            nbytes = _nbytes(inp)  # nccl-tests: the send buffer
        else:
            nbytes = max(_nbytes(out), _nbytes(inp))
        return {"kind": kind, "bytes": nbytes,
                "dtype": _dtype_name(first.dtype) if first is not None else "uint8",
                "group": self._group(group), "phase": self.phase,
                "cpu": first is None or first.device.type == "cpu",
                "coalesced": self._coalescing(group)}

    def _record(self, call, t0, t1, result):
        cur = self.cur
        if cur is None:
            return
        note = getattr(self._tl, "note", None)
        if note:
            call["ready"] = note["ready"]
            call["bucket"] = note["bucket"]
            call["parameters"] = note["parameters"]
        else:
            call["ready"] = t0
        call["done"] = None
        cur["calls"].append(call)
        if call["coalesced"]:
            return
        if result is None or not hasattr(result, "wait"):
            if call["cpu"]:
                call["done"] = t1  # synchronous on the CPU: done when it returns
            return
        if not call["cpu"]:
            call["work"] = result  # the GPU's own timing, read at the step's end
            return
        try:
            fut = result.get_future()
        except Exception:  # a Work without a future (gloo's send/recv): no duration
            return

        def done(f):
            call["done"] = _now()

        try:
            fut.then(done)
        except Exception:
            pass

    def _wrap(self, name, orig):
        kind, oi, ii = _COLLECTIVES[name]
        sig = _signature(orig)
        rec = self

        @functools.wraps(orig)
        def wrapper(*args, **kwargs):
            tl = rec._tl
            if getattr(tl, "depth", 0) or rec.cur is None:
                return orig(*args, **kwargs)  # inside another wrapped call, or not recording
            call = rec._describe(kind, sig, oi, ii, args, kwargs)
            tl.depth = 1
            t0 = _now()
            try:
                result = orig(*args, **kwargs)
            finally:
                tl.depth = 0
            t1 = _now()
            if call is not None:
                rec._record(call, t0, t1, result)
            return result

        wrapper._trainpath_wrapped = orig
        return wrapper

    def _install(self):
        wrapped = {}
        for ns in (dist, _c10d):
            if ns is None:
                continue
            for name in _COLLECTIVES:
                orig = getattr(ns, name, None)
                if orig is None or not callable(orig) or getattr(orig, "_trainpath_wrapped", None):
                    continue
                # one wrapper per function, whichever namespace it is reached through
                w = wrapped.get(id(orig)) or self._wrap(name, orig)
                wrapped[id(orig)] = w
                setattr(ns, name, w)
                self._saved.append((ns, name, orig, w))
        backward = torch.autograd.backward

        @functools.wraps(backward)
        def timed_backward(*a, **k):
            cur = self.cur
            if cur is not None and "bwd0" not in cur:
                cur["bwd0"] = _now()
            prev, self.phase = self.phase, "backward"
            try:
                return backward(*a, **k)
            finally:
                self.phase = prev if prev != "forward" else "other"
                if cur is not None:
                    cur["bwd1"] = _now()

        torch.autograd.backward = timed_backward
        self._saved.append((torch.autograd, "backward", backward, timed_backward))

    def _uninstall(self):
        while self._saved:
            ns, name, orig, w = self._saved.pop()
            if getattr(ns, name, None) is w:  # leave alone what someone else put there since
                setattr(ns, name, orig)

    # ---- steps ----

    @contextlib.contextmanager
    def step(self, samples):
        """One training step: forward, backward and optimizer step inside."""
        record = self.seen >= self.skip
        self.cur = {"calls": [], "samples": int(samples)} if record else None
        self.phase = "other"
        if record:
            self._install()
        t0 = _now()
        ok = False
        try:
            yield
            ok = True
        finally:
            t1 = _now()
            cur = self.cur
            self.cur = None
            self._uninstall()
            self.phase = "other"
            self.seen += 1
            if ok and cur is not None and "fwd0" in cur:
                cur["step0"], cur["step1"] = t0, t1
                self._gpu_durations(cur)
                self.steps.append(cur)

    def _gpu_durations(self, cur):
        works = [c for c in cur["calls"] if "work" in c]
        if not works:
            return
        try:
            torch.cuda.synchronize()
        except Exception:
            pass
        for c in works:
            w = c.pop("work")
            try:
                c["duration"] = int(float(w._get_duration()) * 1e6)  # ms -> ns
            except Exception:  # timing not enabled, or a torch without it
                pass

    # ---- the file ----

    def _figures(self):
        """This rank's recorded steps: layouts (as lists of keys) and times, all whole ns."""
        if not self.steps:
            raise RuntimeError("trainpath_record: no step recorded (the first %d are skipped)" % self.skip)
        steps = []
        for s in self.steps:
            calls = s["calls"]
            origin = min([s["fwd0"]] + [c["ready"] for c in calls])
            bwd0 = s.get("bwd0", s.get("fwd1", s["fwd0"]))
            in_bwd = [c["ready"] for c in calls if c["phase"] == "backward"]
            bwd_end = max(in_bwd) if in_bwd else s.get("bwd1", bwd0)
            durations = []
            for c in calls:
                if "duration" in c:
                    durations.append(c["duration"])
                elif c.get("done") is not None:
                    durations.append(max(0, c["done"] - c["ready"]))
                else:
                    durations.append(None)
            steps.append({
                "layout": [[c["kind"], c["bytes"], c["dtype"], c["group"]] for c in calls],
                "info": [{k: c[k] for k in ("phase", "bucket", "parameters") if k in c} for c in calls],
                "forward_ns": max(0, bwd0 - origin),
                "backward_ns": max(0, bwd_end - bwd0),
                "optimizer_ns": int(s.get("optimizer_ns", 0)),
                "step_ns": max(0, s["step1"] - s["step0"]),
                "ready_ns": [max(0, c["ready"] - origin) for c in calls],
                "duration_ns": durations,
            })
        return {"rank": self.rank, "host": socket.gethostname(), "pid": os.getpid(), "steps": steps,
                "sharded_state_bytes": self._state_bytes()[1]}

    def _parameters(self):
        """The model's parameters as the user wrote them (name, shape, dtype, bytes, trainable),
        and whether they are held as FSDP's flat parameters (sharded)."""
        if self.ddp:
            return [self._param(n, p.shape, p.dtype, p.requires_grad)
                    for n, p in self.inner.named_parameters()], False
        out, seen = [], set()
        # FSDP's flat parameters (torch 1.13: FSDP._handles, FlatParameter._prefixed_param_names;
        # 2.x: FSDP._handle, FlatParameter._fqns, and with use_orig_params the original
        # parameters, views into it, in FlatParameter._params), read back into the originals
        for path, m in self.model.named_modules():
            handles = list(getattr(m, "_handles", None) or [])
            if getattr(m, "_handle", None) is not None:
                handles.append(m._handle)
            for h in handles:
                fp = getattr(h, "flat_param", None)
                names = getattr(fp, "_fqns", None) or getattr(fp, "_prefixed_param_names", None)
                shapes = getattr(fp, "_shapes", None)
                if fp is None or names is None or shapes is None or id(fp) in seen:
                    continue
                seen.add(id(fp))
                for q in list(getattr(fp, "_params", None) or []) + list(getattr(fp, "_shared_params", None) or []):
                    seen.add(id(q))
                prefix = _clean_name(path)
                dtype = getattr(h, "_orig_param_dtype", None) or fp.dtype
                for n, shape in zip(names, shapes):
                    out.append(self._param((prefix + "." if prefix else "") + n, shape, dtype, fp.requires_grad))
        flat = bool(seen)
        for n, p in self.model.named_parameters():
            if id(p) not in seen:
                out.append(self._param(_clean_name(n), p.shape, p.dtype, p.requires_grad))
        return out, flat

    @staticmethod
    def _param(name, shape, dtype, trainable):
        numel = 1
        for d in shape:
            numel *= int(d)
        size = getattr(dtype, "itemsize", None) or torch.empty(0, dtype=dtype).element_size()
        return {"name": name, "shape": [int(d) for d in shape], "dtype": _dtype_name(dtype),
                "bytes": numel * size, "trainable": bool(trainable)}

    def _state_bytes(self):
        """A checkpoint's bytes: (those every rank holds alike, this rank's part of a sharded
        optimizer state, whether the parameters are FSDP's flat shards)."""
        params, sharded = self._parameters()
        if sharded:  # the shards: count the original parameters, and the buffers
            whole = sum(p["bytes"] for p in params)
            whole += sum(b.numel() * b.element_size() for b in self.model.buffers())
        else:  # the state dict, as a checkpoint holds it (FSDP2's DTensors: global sizes)
            whole = 0
            for t in self.inner.state_dict().values():
                if torch.is_tensor(t):
                    whole += t.numel() * t.element_size()
        part = 0
        for st in self.opt.state.values():
            for t in st.values():
                if not torch.is_tensor(t):
                    continue
                if sharded and not _is_dtensor(t):
                    part += t.numel() * t.element_size()  # a shard of a flat parameter's state
                else:
                    whole += t.numel() * t.element_size()
        return whole, part, sharded

    def _layouts(self, figures):
        """Per step, the index of its layout (steps with the same collectives share one)."""
        layouts, infos, index = [], [], []
        for s in figures["steps"]:
            key = json.dumps(s["layout"])
            for i, other in enumerate(layouts):
                if json.dumps(other) == key:
                    index.append(i)
                    break
            else:
                index.append(len(layouts))
                layouts.append(s["layout"])
                infos.append(s["info"])
        out = []
        for lay, info in zip(layouts, infos):
            out.append([dict(kind=k, bytes=b, dtype=d, group=g, **extra) for (k, b, d, g), extra in zip(lay, info)])
        return out, index

    def workload(self, per_rank=None):
        """The version 2 document; per_rank: every rank's _figures(), rank order (gather=True)."""
        mine = self._figures()
        ranks = per_rank or [mine]
        base = ranks[0]
        layouts, index = self._layouts(base)
        for r in ranks[1:]:
            if len(r["steps"]) != len(base["steps"]):
                raise RuntimeError("trainpath_record: rank %d recorded %d steps, rank %d %d" %
                                   (r["rank"], len(r["steps"]), base["rank"], len(base["steps"])))
            for s, (a, b) in enumerate(zip(base["steps"], r["steps"])):
                if a["layout"] != b["layout"]:
                    raise RuntimeError("trainpath_record: step %d: rank %d made other collectives than rank %d"
                                       " (%d against %d)" % (s, r["rank"], base["rank"], len(b["layout"]),
                                                             len(a["layout"])))
        missing = []
        entries = []
        with_durations = all(d is not None for r in ranks for s in r["steps"] for d in s["duration_ns"])
        if not with_durations:
            missing.append("duration_ns")
        for r in ranks:
            e = {"rank": r["rank"]}
            for k in ("forward_ns", "backward_ns", "optimizer_ns", "step_ns", "ready_ns"):
                e[k] = [s[k] for s in r["steps"]]
            if with_durations:
                e["duration_ns"] = [s["duration_ns"] for s in r["steps"]]
            entries.append(e)
        whole = self._state_bytes()[0]
        samples = [s["samples"] for s in self.steps]
        params = self._parameters()[0]
        doc = {
            "trainpath_workload": VERSION,
            "source": self.source,
            "recorded": {
                "torch": torch.__version__, "backend": str(dist.get_backend()), "world_size": self.world,
                "rank": self.rank, "host": socket.gethostname(), "pid": os.getpid(),
                "steps": len(base["steps"]), "skipped_steps": self.skip,
                "ranks": [r["rank"] for r in ranks], "hosts": [r["host"] for r in ranks],
            },
            "groups": self.groups,
            "layouts": layouts,
            "steps": {"layout": index},
            "ranks": entries,
            "model": {"parameters": params, "parameter_bytes": sum(p["bytes"] for p in params)},
            "batch": {"samples_per_rank": max(set(samples), key=samples.count), "sample_bytes": self.sample_bytes},
            "checkpoint": {"bytes": whole + sum(r["sharded_state_bytes"] for r in ranks)},
        }
        if self.ddp:
            doc["recorded"]["bucket_cap_mb"] = getattr(self.model, "bucket_bytes_cap", 0) / 1048576
        if "nccl" in doc["recorded"]["backend"]:
            try:
                v = torch.cuda.nccl.version()
                doc["recorded"]["nccl_version"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
            except Exception:
                pass
        if missing:
            doc["recorded"]["missing"] = missing
        if len(ranks) > 1:
            nsteps = len(base["steps"])
            arrival = []
            for s in range(nsteps):
                ready = [r["steps"][s]["ready_ns"] for r in ranks]
                arrival.append([max(col) - min(col) for col in zip(*ready)])
            # the rank most behind over the step's collectives (as `workload
            # import` has it); without collectives, the longest compute
            slowest = []
            for s in range(nsteps):
                ready = [r["steps"][s]["ready_ns"] for r in ranks]
                first = [min(col) for col in zip(*ready)]
                behind = [(sum(t - f for t, f in zip(rd, first)) if first else
                           r["steps"][s]["forward_ns"] + r["steps"][s]["backward_ns"], -r["rank"])
                          for r, rd in zip(ranks, ready)]
                slowest.append(-max(behind)[1])
            doc["skew"] = {"offset_ns": [0] * len(ranks), "arrival_ns": arrival, "slowest_rank": slowest}
        return doc

    def workload_v1(self):
        """The version 1 document (DDP's buckets only) from the same recording."""
        if not self.ddp:
            raise RuntimeError("trainpath_record: version 1 holds DDP's buckets only; this is %s" % self.source)
        fig = self._figures()
        order = None
        kept = []
        for s, raw in zip(fig["steps"], self.steps):
            buckets = [i["bucket"] for i in s["info"] if "bucket" in i]
            if order is None:
                order = sorted(buckets)
            if sorted(buckets) != order or len(buckets) != len(s["info"]):
                continue  # a step that fired other buckets (DDP still rebuilding), or other collectives
            kept.append((s, raw))
        if not kept:
            raise RuntimeError("trainpath_record: no step with DDP's buckets alone")
        first = kept[0][0]
        by_index = {i["bucket"]: (j, i) for j, i in enumerate(first["info"])}
        buckets = []
        for b in order:
            j, info = by_index[b]
            ready, comm = [], []
            for s, raw in kept:
                k = [i.get("bucket") for i in s["info"]].index(b)
                origin = min([raw["fwd0"]] + [c["ready"] for c in raw["calls"]])
                fwd1 = raw.get("fwd1", raw["fwd0"]) - origin
                ready.append(max(0, s["ready_ns"][k] - fwd1))
                comm.append(s["duration_ns"][k] if s["duration_ns"][k] is not None else 0)
            buckets.append({"index": b, "bytes": first["layout"][j][1], "dtype": first["layout"][j][2],
                            "parameters": info.get("parameters", []), "ready_ns": ready, "allreduce_ns": comm})
        steps = {"forward_ns": [], "backward_ns": [], "optimizer_ns": [], "step_ns": []}
        for s, raw in kept:
            fwd1 = raw.get("fwd1", raw["fwd0"])
            steps["forward_ns"].append(max(0, fwd1 - raw["fwd0"]))
            steps["backward_ns"].append(max(0, max(c["ready"] for c in raw["calls"]) - fwd1))
            steps["optimizer_ns"].append(s["optimizer_ns"])
            steps["step_ns"].append(s["step_ns"])
        doc = self.workload()
        return {
            "trainpath_workload": 1, "source": self.source,
            "recorded": {k: v for k, v in doc["recorded"].items() if k not in ("ranks", "hosts", "missing")},
            "model": doc["model"], "buckets": buckets, "steps": steps,
            "batch": doc["batch"], "checkpoint": doc["checkpoint"],
        }

    def write(self, path, version=VERSION):
        """Rank 0 writes the workload file (atomically); every rank must call it.

        Gathers every rank's figures first where gather=True (or where the
        optimizer's state is sharded, to add it up): a collective, so no rank
        may skip it. Returns the document on rank 0, None on the others."""
        if version == 1:
            doc = self.workload_v1()
        else:
            per_rank = None
            if self.gather or self._state_bytes()[2]:
                mine = self._figures()
                everyone = [None] * self.world
                dist.all_gather_object(everyone, mine)
                per_rank = sorted(everyone, key=lambda r: r["rank"])
                if not self.gather:
                    total = sum(r["sharded_state_bytes"] for r in per_rank)
                    per_rank = [dict(mine, sharded_state_bytes=total)]
            doc = self.workload(per_rank)
        if self.rank != 0:
            return None
        tmp = "%s.tmp.%d" % (path, os.getpid())
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
        return doc
