#!/usr/bin/env python3
"""An FSDP-style (ZeRO-3) job on CPU and gloo, two processes, recorded with
contrib/pytorch/trainpath_record.py.

Torch 1.13's own FSDP cannot run on Debian 12 (Python 3.11: `import
torch.distributed.fsdp` fails on an unhashable dataclass default; FSDP 1.13
needs CUDA; 1.13's gloo has no _allgather_base or _reduce_scatter_base), so
this job makes FSDP's communication itself, from the same places FSDP does,
with FULL_SHARD: each Linear layer is one unit whose parameters are one flat
parameter, padded to a multiple of the world size and sharded (this rank
keeps its shard: the parameter the optimizer updates); before the unit's
forward its shards are all-gathered (FSDP's pre-forward unshard); when the
gradient reaches the unit's output in the backward they are all-gathered
again (FSDP frees the unsharded parameter after the forward and unshards it
in its pre-backward hook); when the unit's flat gradient is complete it is
divided by the world size and reduce-scattered into the shard's gradient
(FSDP's post-backward hook). The calls are made as the FSDP of each torch
makes them (API):

  1.13    dist._all_gather_base(out, shard, group)         flat_param.py
          dist._reduce_scatter_base(out, grad, group=g)    default_hooks.reduce_scatter_hook
  2.x-cpu dist.all_gather(list(out.chunk(n)), shard, group=g)   _flat_param.py, a CPU flat parameter
          dist.reduce_scatter_tensor(out, grad, group=g)        _runtime_utils._reduce_grad
  fsdp2   dist.all_gather_into_tensor(output_tensor=, input_tensor=, group=, async_op=False)
          dist.reduce_scatter_tensor(output=, input=, group=, op=SUM)   _fsdp_collectives.py
          (over a group of its own, as a DeviceMesh's)

Where gloo lacks a single-tensor collective (torch 1.13), it is given one
made of gloo's own all_gather and all_reduce, installed as torch.distributed's
attribute before the recorder starts: the recorder sees FSDP's call, and the
calls inside it are not counted again.

Each unit's module carries `_handle.flat_param` with `_fqns` and `_shapes`,
as FSDP's modules and FlatParameter do, so the recorder reads the original
parameters back. Rank 0 also writes OUT.units.json: each unit's flat
parameter numel, padded numel and dtype as this job computed them, and the
final parameters' checksum on each rank (ranks must agree).

usage: fsdp_mirror.py OUT.json PORT STEPS API [gather]"""
import json
import os
import sys
import types

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.join(os.environ["TP_SOURCE_ROOT"], "contrib", "pytorch"))
import trainpath_record  # noqa: E402


def _gloo_shims():
    """Single-tensor all-gather and reduce-scatter where gloo has none (torch 1.13): the
    names FSDP calls, made of gloo's all_gather and all_reduce. Returns the names shimmed."""
    n = dist.get_world_size()

    def all_gather_base(output_tensor, input_tensor, group=None, async_op=False):
        dist.all_gather(list(output_tensor.chunk(dist.get_world_size(group))), input_tensor, group=group)

    def reduce_scatter_base(output, input, op=dist.ReduceOp.SUM, group=None, async_op=False):
        total = input.clone()
        dist.all_reduce(total, op=op, group=group)
        output.copy_(total.chunk(dist.get_world_size(group))[dist.get_rank(group)])

    shims = []
    probes = ((("all_gather_into_tensor", "_all_gather_base"), all_gather_base,
               lambda f: f(torch.zeros(2 * n), torch.ones(2))),
              (("reduce_scatter_tensor", "_reduce_scatter_base"), reduce_scatter_base,
               lambda f: f(torch.zeros(2), torch.ones(2 * n))))
    for names, shim, probe in probes:
        try:  # every rank probes alike: the same outcome everywhere
            probe(getattr(dist, names[0]))
            continue
        except (RuntimeError, AttributeError):
            pass
        for name in names:
            setattr(dist, name, shim)
            shims.append(name)
    return sorted(shims)


class Unit:
    """One FSDP unit: a module's parameters as one flat, padded, sharded parameter."""

    def __init__(self, module, group, api):
        self.group, self.api = group, api
        self.world, self.rank = dist.get_world_size(group), dist.get_rank(group)
        named = list(module.named_parameters(recurse=False))
        self.names = [n for n, _ in named]
        self.shapes = [tuple(p.shape) for _, p in named]
        self.numels = [p.numel() for _, p in named]
        self.numel = sum(self.numels)
        self.padded = -(-self.numel // self.world) * self.world
        flat = torch.zeros(self.padded)
        flat[:self.numel] = torch.cat([p.detach().reshape(-1) for _, p in named])
        per = self.padded // self.world
        self.shard = torch.nn.Parameter(flat[self.rank * per:(self.rank + 1) * per].clone())
        self.shard._fqns, self.shard._shapes = tuple(self.names), tuple(self.shapes)
        for n in self.names:
            del module._parameters[n]
        module._handle = types.SimpleNamespace(flat_param=self.shard)
        module.register_forward_pre_hook(self.pre_forward)
        module.register_forward_hook(self.post_forward)
        self.module, self.full = module, None

    def all_gather(self, out):
        shard = self.shard.detach()
        if self.api == "1.13":
            dist._all_gather_base(out, shard, self.group)
        elif self.api == "2.x-cpu":
            dist.all_gather(list(out.chunk(self.world)), shard, group=self.group)
        else:
            dist.all_gather_into_tensor(output_tensor=out, input_tensor=shard, group=self.group, async_op=False)

    def reduce_scatter(self, out, grad):
        if self.api == "1.13":
            dist._reduce_scatter_base(out, grad, group=self.group)
        elif self.api == "2.x-cpu":
            dist.reduce_scatter_tensor(out, grad, group=self.group)
        else:
            dist.reduce_scatter_tensor(output=out, input=grad, group=self.group, op=dist.ReduceOp.SUM)

    def pre_forward(self, module, inputs):
        full = torch.empty(self.padded)
        self.all_gather(full)
        full.requires_grad_()
        off = 0
        for n, shape, k in zip(self.names, self.shapes, self.numels):
            setattr(module, n, full[off:off + k].view(shape))
            off += k
        full.register_hook(self.post_backward)
        self.full = full

    def post_forward(self, module, inputs, output):
        if output.requires_grad:
            output.register_hook(self.pre_backward)

    def pre_backward(self, grad):
        self.all_gather(self.full.data)  # FSDP unshards the freed parameter again
        return None

    def post_backward(self, grad):
        out = torch.empty(self.padded // self.world)
        self.reduce_scatter(out, (grad / self.world).contiguous())
        self.shard.grad = out if self.shard.grad is None else self.shard.grad + out
        return None


class Sharded(torch.nn.Module):
    """The model with each Linear layer made an FSDP unit; its parameters are the shards."""

    def __init__(self, net, group, api):
        super().__init__()
        self.net = net
        self.units = [Unit(m, group, api) for m in net if isinstance(m, torch.nn.Linear)]
        self.shards = torch.nn.ParameterList([u.shard for u in self.units])

    def forward(self, x):
        return self.net(x)


def worker(rank, out, port, steps, api, gather):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(1)
    torch.set_num_threads(1)
    shims = _gloo_shims()
    group = dist.new_group(ranks=[0, 1]) if api == "fsdp2" else None
    # 64*129+129 = 8385 elements: odd, so the first unit is padded for two ranks
    net = torch.nn.Sequential(torch.nn.Linear(64, 129), torch.nn.ReLU(), torch.nn.Linear(129, 129),
                              torch.nn.ReLU(), torch.nn.Linear(129, 7))
    model = Sharded(net, group, api)
    x, y = torch.randn(16, 64), torch.randint(0, 7, (16,))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rec = trainpath_record.Recorder(model, opt, sample_bytes=x[0].numel() * x[0].element_size() + 8,
                                    gather=gather, source="pytorch-fsdp")
    for _ in range(steps):
        with rec.step(samples=len(x)):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    rec.write(out)
    # the trained model, gathered: every rank must hold the same
    full = [torch.empty(u.padded) for u in model.units]
    for u, f in zip(model.units, full):
        dist.all_gather(list(f.chunk(2)), u.shard.detach())
    sums = [None, None]
    dist.all_gather_object(sums, [round(float(f.sum()), 4) for f in full])
    if rank == 0:
        with open(out[:-len(".json")] + ".units.json", "w") as f:
            json.dump({"units": [{"numel": u.numel, "padded": u.padded, "dtype": "float32"} for u in model.units],
                       "shims": shims, "checksums": sums}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) < 4 or a[3] not in ("1.13", "2.x-cpu", "fsdp2"):
        sys.exit(__doc__.strip().splitlines()[-1])
    mp.spawn(worker, args=(a[0], int(a[1]), int(a[2]), a[3], "gather" in a[4:]), nprocs=2)
