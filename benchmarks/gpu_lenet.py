"""LeNet on one GPU: neomx (the tutorial's ``train`` on ``[mx.gpu(0)]``) against PyTorch eager on
``cuda:0``, at batch 1024 and 8192; prints images/s and the ratio neomx / PyTorch (issue 5's GPU
part: neomx >= 1.5 x PyTorch eager at batch 1024).

One short script for the device machine (each measurement in a fresh process, peers alternating)::

    .venv/bin/python benchmarks/gpu_lenet.py [--batches 1024,8192] [--iters 50] [--warmup 5]
        [--repeats 3] [--out gpu_lenet.json]

Both peers do what the tutorial does every iteration: copy a float64 numpy batch to the device,
forward, backward, SGD update (``w -= lr * grad / batch``), and an accuracy check every 10th
iteration (which reads the predictions back to the host). The clock stops after
``mx.nd.waitall()`` / ``torch.cuda.synchronize()``.

Without CUDA it says so and exits 0; ``--device cpu`` runs the same code on the CPU (a smoke
test of the script, not a GPU number).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402  (numpy only)
import seed_code  # noqa: E402


def _neomx(batch, iters, warmup, device, seed):
    import neomx as mx
    ctx = mx.gpu(0) if device == "gpu" else mx.cpu(0)
    data = common.cycling(common.mnist_like_batches(2, batch, seed=seed))
    r = seed_code.train(mx, seed_code.lenet(mx), [batch, 1, 28, 28], data, [ctx], [1],
                        iterations=iters, warmup=warmup)
    return r["loop_s"], r["acc"]


def _torch(batch, iters, warmup, device, seed):
    import numpy as np
    import torch
    from workloads import torch_models as tm
    dev = torch.device("cuda:0" if device == "gpu" else "cpu")
    data = common.cycling(common.mnist_like_batches(2, batch, seed=seed))
    model = tm.lenet(torch).to(dev)
    tm.init_params(torch, model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1 / batch)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()
    acc, t0 = 0.0, None
    for i in range(warmup + iters):
        if i == warmup:
            sync()
            t0 = time.perf_counter()
        x, y = data()
        xt = torch.from_numpy(x).to(dev).float().reshape(-1, 1, 28, 28)
        yt = torch.from_numpy(y).to(dev).long()
        opt.zero_grad()
        out = model(xt)
        torch.nn.functional.cross_entropy(out, yt, reduction="sum").backward()
        opt.step()
        if (i - warmup if i >= warmup else i) % 10 == 0:
            acc = float((out.argmax(1).cpu().numpy() == y).sum()) / batch
    sync()
    return time.perf_counter() - t0, acc


def worker(o):
    """One measurement (a fresh process): writes {"loop_s", "acc", "images_per_s"} as JSON."""
    fn = _neomx if o.peer == "neomx" else _torch
    loop_s, acc = fn(o.batch, o.iters, o.warmup, o.device, o.seed)
    print(json.dumps({"loop_s": loop_s, "acc": acc, "images_per_s": o.batch * o.iters / loop_s}))


def _cuda_available():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", default="1024,8192")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="also write the results as JSON here")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--peer", choices=("neomx", "torch"), help=argparse.SUPPRESS)
    ap.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    o = ap.parse_args(argv)
    if o.worker:
        return worker(o)
    if o.device == "gpu" and not _cuda_available():
        print("gpu_lenet: no CUDA device here; nothing measured (use --device cpu for a smoke run)")
        return 0
    results = []
    for batch in (int(b) for b in o.batches.split(",")):
        samples = {"neomx": [], "torch": []}
        for rep in range(o.repeats):
            for peer in (("neomx", "torch") if rep % 2 == 0 else ("torch", "neomx")):
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--peer", peer,
                       "--batch", str(batch), "--iters", str(o.iters), "--warmup", str(o.warmup),
                       "--device", o.device, "--seed", str(o.seed)]
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=o.timeout)
                if p.returncode != 0:
                    print(f"{peer} batch {batch} failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
                    return 1
                r = json.loads(p.stdout.strip().splitlines()[-1])
                samples[peer].append(r)
                print(f"  batch {batch:5d} {peer:5s} #{rep + 1}: {r['images_per_s']:12.0f} images/s "
                      f"(loop {r['loop_s']:.3f} s, acc {r['acc']:.3f})", flush=True)
        med = {k: sorted(s["images_per_s"] for s in v)[len(v) // 2] for k, v in samples.items()}
        results.append({"batch": batch, "device": o.device, "iters": o.iters, "warmup": o.warmup,
                        "median_images_per_s": med, "ratio_neomx_over_torch": med["neomx"] / med["torch"],
                        "samples": samples})
    print(f"\nLeNet training on {o.device}, {o.iters} iterations after {o.warmup} warm-up, "
          f"median of {o.repeats} fresh processes")
    print(f"{'batch':>6}  {'neomx img/s':>12}  {'torch img/s':>12}  {'neomx/torch':>11}")
    for r in results:
        m = r["median_images_per_s"]
        print(f"{r['batch']:>6}  {m['neomx']:>12.0f}  {m['torch']:>12.0f}  {r['ratio_neomx_over_torch']:>10.2f}x")
    for r in results:
        if r["batch"] == 1024 and o.device == "gpu":
            verdict = "met" if r["ratio_neomx_over_torch"] >= 1.5 else "NOT met"
            print(f"target (issue): neomx >= 1.5 x PyTorch eager images/s at batch 1024: {verdict}")
    if o.out:
        from neomx.util import atomic_write_text
        atomic_write_text(o.out, json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
