#!/usr/bin/env python3
"""A real PyTorch DDP job (CPU, gloo, two processes) under torch.profiler,
as a user would profile it (record_shapes=True, a schedule of 4 active
steps after a wait and a warm-up), rank 0's trace exported with
export_chrome_trace; the same job also recorded by
contrib/pytorch/trainpath_record.py, whose bucket bytes are the truth the
import is checked against. The model is ddp_record.py's.
usage: ddp_profile.py TRACE.json RECORDED.json PORT"""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, schedule

sys.path.insert(0, os.path.join(os.environ["TP_SOURCE_ROOT"], "contrib", "pytorch"))
import trainpath_record  # noqa: E402


def worker(rank, trace, recorded, port):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(1)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.25)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    x = torch.randn(32, 64)
    y = torch.randint(0, 10, (32,))
    rec = trainpath_record.Recorder(ddp, opt, sample_bytes=x[0].numel() * x[0].element_size() + 8)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=1, warmup=1, active=4, repeat=1)) as prof:
        for _ in range(7):
            with rec.step(samples=len(x)):
                loss = torch.nn.functional.cross_entropy(ddp(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            prof.step()
    if rank == 0:
        prof.export_chrome_trace(trace)
    rec.write(recorded)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(sys.argv[1], sys.argv[2], int(sys.argv[3])), nprocs=2)
