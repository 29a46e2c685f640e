#!/usr/bin/env python3
"""A real PyTorch DDP job (CPU, gloo, two processes) recorded with
contrib/pytorch/trainpath_record.py: a small MLP with small buckets, so DDP
makes several. usage: ddp_record.py OUT.json PORT [STEPS]"""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.join(os.environ["TP_SOURCE_ROOT"], "contrib", "pytorch"))
import trainpath_record  # noqa: E402


def worker(rank, out, port, steps):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(1)
    torch.set_num_threads(1)
    # DDP's first bucket holds up to 1 MB (torch's default), the others
    # bucket_cap_mb: about 2.3 MB of parameters make three buckets
    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.25)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    x = torch.randn(32, 64)
    y = torch.randint(0, 10, (32,))
    rec = trainpath_record.Recorder(ddp, opt, sample_bytes=x[0].numel() * x[0].element_size() + 8)
    for _ in range(steps):
        with rec.step(samples=len(x)):
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    rec.write(out)
    # every rank past its last collective before the group goes: gloo in
    # torch 1.13 can abort a process whose peer tears down first
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 12),
             nprocs=2)
