#!/usr/bin/env python3
"""A real PyTorch DDP job (CPU, gloo, two processes) recorded with
contrib/pytorch/trainpath_record.py, with small buckets, so DDP makes
several: a small MLP, or a small convolutional net. Rank 0 also writes
OUT.ddp.json, what DDP itself reports of the model after the job
(_get_ddp_logging_data: the rebuilt buckets' sizes, rebuilt_bucket_sizes, the parameter tensors
and bytes) and the model's parameter count, for the test to hold the
recording against; and whether the recorder left torch as it found it
(the collectives and autograd.backward put back, an LR scheduler made
after it working). usage:
    ddp_record.py OUT.json PORT [STEPS [mlp|conv [gather] [v1=OUT1.json]]]
gather: every rank's figures in the file; v1=: version 1 written too."""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.join(os.environ["TP_SOURCE_ROOT"], "contrib", "pytorch"))
import trainpath_record  # noqa: E402


def model_of(kind):
    """The model, a batch of its inputs and their labels."""
    if kind == "conv":
        # about 1.3 MB of parameters: two convolutions and a head of two
        # linear layers, past DDP's 1 MB first bucket, so several buckets
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3), torch.nn.ReLU(), torch.nn.Conv2d(32, 64, 3),
                                    torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                    torch.nn.Linear(64 * 6 * 6, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
        return model, torch.randn(16, 3, 16, 16), torch.randint(0, 10, (16,)), 0.05
    # DDP's first bucket holds up to 1 MB (torch's default), the others
    # bucket_cap_mb: about 2.3 MB of parameters make three buckets
    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    return model, torch.randn(32, 64), torch.randint(0, 10, (32,)), 0.25


def worker(rank, out, port, steps, kind, gather, v1):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(1)
    torch.set_num_threads(1)
    model, x, y, cap = model_of(kind)
    originals = (dist.all_reduce, dist.distributed_c10d.all_reduce, torch.autograd.backward)
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=cap)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    rec = trainpath_record.Recorder(ddp, opt, sample_bytes=x[0].numel() * x[0].element_size() + 8,
                                    gather=gather)
    # made after the recorder: it wraps optimizer.step through __self__/__func__
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=100)
    for _ in range(steps):
        with rec.step(samples=len(x)):
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
    rec.write(out)
    if v1:
        rec.write(v1, version=1)
    if rank == 0:
        info = ddp._get_ddp_logging_data()
        with open(out[:-len(".json")] + ".ddp.json", "w") as f:
            json.dump({"bucket_sizes": [int(b) for b in str(info["rebuilt_bucket_sizes"]).split(",")],
                       "has_rebuilt_buckets": int(info["has_rebuilt_buckets"]),
                       "num_parameter_tensors": int(info["num_parameter_tensors"]),
                       "total_parameter_size_bytes": int(info["total_parameter_size_bytes"]),
                       "parameters": sum(p.numel() for p in model.parameters()),
                       "scheduler_steps": opt._step_count,
                       # the recorder put torch's functions back after the steps
                       "restored": (dist.all_reduce, dist.distributed_c10d.all_reduce,
                                    torch.autograd.backward) == originals}, f)
    # every rank past its last collective before the group goes: gloo in
    # torch 1.13 can abort a process whose peer tears down first
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    extra = sys.argv[5:]
    v1 = next((a[len("v1="):] for a in extra if a.startswith("v1=")), None)
    mp.spawn(worker, args=(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 12,
                           sys.argv[4] if len(sys.argv) > 4 else "mlp", "gather" in extra, v1), nprocs=2)
