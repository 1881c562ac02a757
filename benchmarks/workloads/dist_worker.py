"""One worker of the ``dist`` benchmark, started by ``workloads/dist.py`` (neomx/torch: with
RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; MXNet: with ps-lite's DMLC_* variables). Trains LeNet
on its share of every batch and writes its timings as JSON.

    python benchmarks/workloads/dist_worker.py --peer {neomx,mxnet,torch} --workers N
        --steps S --warmup W --batch B --threads T --seed SEED --device {cpu,gpu} --out FILE

This file imports only numpy and the stdlib at the top: it also runs in the MXNet venv.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import common  # noqa: E402

GRAD_FLOATS = 431080  # LeNet's parameters: 500 + 20 + 25000 + 50 + 400000 + 500 + 5000 + 10
MICRO_REPS = 20


def _shards(batch, rank, n, seed, count=4):
    share = batch // n
    return [(x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share])
            for x, y in common.mnist_like_batches(count, batch, seed=seed)]


def run_module(mx, o):
    """neomx or MXNet: ``Module`` on this worker's shard, ``dist_sync`` when there are several
    workers (``dist_device_sync`` on a GPU), no store for one."""
    import seed_code
    n = o.workers
    ctx = mx.gpu(0) if o.device == "gpu" else mx.cpu()
    kv = mx.kv.create("dist_device_sync" if o.device == "gpu" else "dist_sync") if n > 1 else None
    rank = kv.rank if kv is not None else 0
    share = o.batch // n
    mod = mx.mod.Module(seed_code.lenet(mx), label_names=("out_label",), context=ctx)
    mod.bind(data_shapes=[("data", (share, 1, 28, 28))], label_shapes=[("out_label", (share,))])
    mod.init_params(mx.init.Uniform(0.1))
    mod.init_optimizer(kvstore=kv if kv is not None else "local", optimizer="sgd",
                       optimizer_params={"learning_rate": 0.1, "rescale_grad": 1.0 / o.batch})
    batches = [mx.io.DataBatch([mx.nd.array(x.reshape(-1, 1, 28, 28), ctx=ctx)],
                               [mx.nd.array(y, ctx=ctx)])
               for x, y in _shards(o.batch, rank, n, o.seed)]
    stats = getattr(kv, "comm_stats", None)  # neomx only
    t0 = None
    for i in range(o.warmup + o.steps):
        if i == o.warmup:
            mx.nd.waitall()
            if kv is not None:
                kv._barrier()
            if stats is not None:
                stats.update(pushes=0, buckets=0, bytes=0, seconds=0.0)
            t0 = time.perf_counter()
        mod.forward_backward(batches[i % len(batches)])
        mod.update()
    mx.nd.waitall()
    out = {"loop_s": time.perf_counter() - t0, "rank": rank}
    if stats is not None:
        pushes = max(1, stats["pushes"])
        out.update(allreduce_ms_step=1e3 * stats["seconds"] / pushes,
                   buckets_per_step=stats["buckets"] / pushes)
    if kv is not None:  # one pushpull of LeNet's gradient size through the store
        kv._barrier()
        g = mx.nd.ones((GRAD_FLOATS,), ctx=ctx)
        kv.init("micro", g)
        for _ in range(3):
            kv.pushpull("micro", g)
        g.wait_to_read()
        t1 = time.perf_counter()
        for _ in range(MICRO_REPS):
            kv.pushpull("micro", g)
            g.wait_to_read()
        out["allreduce_ms_micro"] = 1e3 * (time.perf_counter() - t1) / MICRO_REPS
    return out


def run_torch(torch, o):
    """PyTorch: the same LeNet under DistributedDataParallel (Gloo) for several workers."""
    import torch.distributed as dist
    from workloads import torch_models as tm
    n = o.workers
    device = "cuda:0" if o.device == "gpu" else "cpu"
    if n > 1:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if n > 1 else 0
    torch.manual_seed(o.seed)
    model = tm.lenet(torch).to(device)
    tm.init_params(torch, model)
    if n > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    # DDP averages the workers' gradients: lr / share keeps 0.1 per example of the whole batch
    opt = torch.optim.SGD(model.parameters(), lr=0.1 / (o.batch // n))
    batches = [(torch.from_numpy(x).float().reshape(-1, 1, 28, 28).to(device),
                torch.from_numpy(y).long().to(device)) for x, y in _shards(o.batch, rank, n, o.seed)]

    def sync():
        if device != "cpu":
            torch.cuda.synchronize()
    t0 = None
    for i in range(o.warmup + o.steps):
        if i == o.warmup:
            sync()
            if n > 1:
                dist.barrier()
            t0 = time.perf_counter()
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y, reduction="sum").backward()
        opt.step()
    sync()
    out = {"loop_s": time.perf_counter() - t0, "rank": rank}
    if n > 1:  # one all_reduce of LeNet's gradient size
        g = torch.ones(GRAD_FLOATS, device=device)
        for _ in range(3):
            dist.all_reduce(g)
        sync()
        t1 = time.perf_counter()
        for _ in range(MICRO_REPS):
            dist.all_reduce(g)
        sync()
        out["allreduce_ms_micro"] = 1e3 * (time.perf_counter() - t1) / MICRO_REPS
        dist.destroy_process_group()
    return out


def main(argv=None):
    p = argparse.ArgumentParser()
    for name in ("--peer", "--device", "--out"):
        p.add_argument(name, required=True)
    for name in ("--workers", "--steps", "--warmup", "--batch", "--threads", "--seed"):
        p.add_argument(name, type=int, required=True)
    o = p.parse_args(argv)
    import numpy as np
    np.random.seed(o.seed)
    if o.peer == "mxnet":
        import mxnet as lib
        res = run_module(lib, o)
    else:
        import torch
        res = {"threads": common.set_torch_threads(torch, o.threads)}
        if o.peer == "neomx":
            import neomx as lib
            res.update(run_module(lib, o))
        else:
            res.update(run_torch(torch, o))
    Path(o.out).write_text(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
