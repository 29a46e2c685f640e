#!/usr/bin/env python3
"""A real PyTorch DDP job (CPU, gloo, two processes) recorded with
contrib/pytorch/trainpath_record.py: a small MLP (64-512-512-512-10) with
small buckets, so DDP makes several. Rank 0 also writes OUT.ddp.json, what
DDP itself reports after the job (_get_ddp_logging_data: the rebuilt
buckets' sizes, the parameter tensors and bytes), for the test to hold the
recording against.

usage: ddp_job.py OUT.json PORT STEPS [gather] [v1=OUT1.json]"""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.join(os.environ["TP_SOURCE_ROOT"], "contrib", "pytorch"))
import trainpath_record  # noqa: E402


def worker(rank, out, port, steps, gather, v1):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(1)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    originals = (dist.all_reduce, dist.distributed_c10d.all_reduce, torch.autograd.backward)
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.25)
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
                       "num_parameter_tensors": int(info["num_parameter_tensors"]),
                       "total_parameter_size_bytes": int(info["total_parameter_size_bytes"]),
                       "scheduler_steps": opt._step_count,
                       # the recorder put torch's functions back after the steps
                       "restored": (dist.all_reduce, dist.distributed_c10d.all_reduce,
                                    torch.autograd.backward) == originals}, f)
    # every rank past its last collective before the group goes: gloo in
    # torch 1.13 can abort a process whose peer tears down first
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    args = sys.argv[1:]
    v1 = next((a[3:] for a in args if a.startswith("v1=")), None)
    mp.spawn(worker, args=(args[0], int(args[1]), int(args[2]), "gather" in args[3:], v1), nprocs=2)
