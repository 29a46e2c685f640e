#!/usr/bin/env python3
"""The PyTorch side of bench/step-vs-pytorch.sh (not a test). Two processes,
gloo over TCP on this host, one thread each (torch.set_num_threads(1), as
trainpath step's ranks compute on one core each).

  pytorch_ddp.py step OUT.json PORT STEPS
      A real DistributedDataParallel job (an MLP of four 1024-wide layers,
      about 3.4 M parameters, Adam, batch 64, bucket_cap_mb 1: one bucket a
      layer or so), recorded by contrib/pytorch/trainpath_record.py, which
      writes OUT.json (rank 0's times). The first step is DDP's bucket
      rebuild and is not recorded.

  pytorch_ddp.py allreduce OUT.json PORT SIZES ITERS
      torch.distributed.all_reduce (gloo, f32, sum) at each size in bytes
      (comma-separated): 5 warm-up calls, then ITERS calls timed one by one
      on each rank; OUT.json gets, per size, the mean and median over the
      iterations of the slower rank's time (the two ranks' times gathered
      after the loop), as trainpath coll reports its own (per iteration, the
      maximum over ranks).
"""
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "contrib", "pytorch"))
import trainpath_record  # noqa: E402


def init(rank, port):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.set_num_threads(1)
    torch.manual_seed(1)


def step_job(rank, out, port, steps):
    init(rank, port)
    layers = [torch.nn.Linear(256, 1024), torch.nn.ReLU()]
    for _ in range(3):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    layers += [torch.nn.Linear(1024, 10)]
    model = torch.nn.Sequential(*layers)
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-4)
    x = torch.randn(64, 256)
    y = torch.randint(0, 10, (64,))
    rec = trainpath_record.Recorder(ddp, opt, sample_bytes=x[0].numel() * x[0].element_size() + 8)
    for _ in range(steps + 1):
        with rec.step(samples=len(x)):
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    rec.write(out)
    dist.barrier()
    dist.destroy_process_group()


def allreduce_job(rank, out, port, sizes, iters):
    init(rank, port)
    res = {}
    for size in sizes:
        t = torch.ones(max(1, size // 4), dtype=torch.float32)
        for _ in range(5):
            dist.all_reduce(t)
        times = []
        dist.barrier()
        for _ in range(iters):
            t0 = time.perf_counter_ns()
            dist.all_reduce(t)
            times.append(time.perf_counter_ns() - t0)
        mine = torch.tensor(times, dtype=torch.float64)
        both = [torch.zeros_like(mine) for _ in range(2)]
        dist.all_gather(both, mine)
        slower = torch.maximum(both[0], both[1]).tolist()
        res[str(size)] = {"mean_ns": statistics.fmean(slower), "p50_ns": statistics.median(slower),
                          "iters": iters}
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"torch": torch.__version__, "backend": "gloo", "sizes": res}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mode, out, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "step":
        mp.spawn(step_job, args=(out, port, int(sys.argv[4])), nprocs=2)
    elif mode == "allreduce":
        sizes = [int(s) for s in sys.argv[4].split(",")]
        mp.spawn(allreduce_job, args=(out, port, sizes, int(sys.argv[5])), nprocs=2)
    else:
        sys.exit(f"pytorch_ddp.py: unknown mode '{mode}' (step or allreduce)")
