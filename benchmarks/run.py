"""neomx benchmarks: neomx vs the real MXNet 1.9.1 vs plain PyTorch eager (``make bench``).

    python benchmarks/run.py [--workloads mlp,lenet,...] [--peers neomx,mxnet,torch]
        [--repeats N] [--quick] [--threads N] [--out benchmarks/results]

Every measurement runs in a fresh process (``worker.py``) per (peer, workload, repeat), with the
same OpenMP/BLAS/torch thread count for every peer; peers are interleaved (and rotated) across
repeats. Prints one table (median, spread, ratio peer/neomx: > 1 means neomx is faster/smaller)
and writes it as JSON, text and a bar chart PNG. See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import fcntl
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402
from workloads import NAMES  # noqa: E402

PEERS = ("neomx", "mxnet", "torch")
PEER_LABEL = {"neomx": "neomx", "mxnet": "MXNet 1.9.1", "torch": "PyTorch eager"}
# (metric key, unit, what is measured); kept here so run.py needs no framework import
METRICS = {
    "mlp": ("time_s", "s", "perceptron loop: 100 it, batch 100"),
    "lenet": ("time_s", "s", "LeNet train: 50 it, batch 1024, 1 device"),
    "lenet-2dev": ("time_s", "s", "LeNet train: 50 it, batch 1024, cpu(0)+cpu(1)"),
    "imperative": ("us_per_op", "us/op", "small NDArray ops (16x16)"),
    "bind": ("time_s", "s", "LeNet simple_bind + init + 1st iteration"),
    "memory": ("peak_mib", "MiB", "peak RSS above baseline, LeNet batch 1024"),
    "dist": ("time_s", "s", "LeNet, 20 steps of batch 256 over 2 worker processes"),
    "autograd-mlp": ("time_s", "s", "autograd MLP: 300 steps, batch 64, record/backward/SGD"),
    "gluon-lenet": ("time_s", "s", "Gluon LeNet hybridized: 50 steps, batch 256, Trainer"),
    "gluon-lenet-imperative": ("time_s", "s", "Gluon LeNet imperative: 50 steps, batch 256"),
    "resnet18": ("time_s", "s", "ResNet-18 hybridized: 5 train steps, batch 32, 224x224"),
    "lstm-lm": ("time_s", "s", "Gluon LSTM LM hybridized: 20 steps, 2x200, batch 32, seq 35"),
    # time per image so that lower is better like the others (images/s is in the extras)
    "image-record-iter": ("us_per_image", "us/image",
                          "ImageRecordIter crop 224+mirror+normalize, batch 64, 2 threads"),
    "engine-bulk": ("time_s", "s", "CPU s issuing 32 small ops in mx.engine.bulk(32) while an FC forward is in flight, 200 it"),
    "sparse": ("time_s", "s", "20 csr.dense dots + 20 sparse logistic steps, 1024x100k at 1%"),
    # the geometric mean over every (op, shape, fwd / fwd+bwd) cell; the per-op table follows
    "op-bench": ("geomean_us", "us", "30 ops x 2 shapes, fwd and fwd+bwd: geomean us/call"),
}
HEAVY = ("lenet", "lenet-2dev", "memory", "dist", "resnet18", "image-record-iter", "op-bench")
# The targets: neomx's median <= factor x the peer's median (or an absolute bound).
TARGETS = {
    "lenet": [("mxnet", 0.6), ("torch", 0.8)],
    "mlp": [("mxnet", 0.5)],
    "imperative": [("torch", 1.2)],
    "memory": [("mxnet", 1.0)],
    "bind": [("abs", 1.0)],
    "autograd-mlp": [("mxnet", 0.5), ("torch", 1.3)],
    "gluon-lenet": [("mxnet", 0.6), ("torch", 0.9)],
    "gluon-lenet-imperative": [("mxnet", 0.8)],
    "resnet18": [("mxnet", 0.7), ("torch", 1.0)],
    # steps/s >= MXNet's and >= 0.9x PyTorch's: time <= MXNet's and <= 1/0.9 x PyTorch's
    "lstm-lm": [("mxnet", 1.0), ("torch", 1.0 / 0.9)],
    "image-record-iter": [("mxnet", 1.0)],  # us/image <= MXNet's, i.e. images/s >= MXNet's
    "sparse": [("mxnet", 1.0)],
}
BUSY_WARN = 0.10  # warn when other processes used more than 10% of the CPUs during a measurement


# --- running measurements ---------------------------------------------------------------------
def _cpu_busy_s():
    """Non-idle CPU seconds of the whole machine so far (/proc/stat), or None."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def find_mxnet_python(oracle, timeout):
    """The MXNet oracle's interpreter (installing it on first use), or (None, why)."""
    if not oracle.exists():
        return None, f"{oracle} not found"
    try:
        p = subprocess.run([str(oracle)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"{oracle} timed out installing MXNet"
    py = p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() else ""
    if not py:
        return None, f"MXNet 1.9.1 could not be installed ({oracle} exit {p.returncode}: {p.stderr.strip()[-300:]})"
    q = subprocess.run([py, "-c", "import mxnet; print(mxnet.__version__)"], capture_output=True, text=True)
    if q.returncode != 0:
        return None, f"MXNet does not import in {py}: {q.stderr.strip()[-300:]}"
    return py, q.stdout.strip()


def wait_idle(max_wait, threshold=BUSY_WARN, window=0.25):
    """Wait (up to ``max_wait`` s) for a ``window`` in which other processes use < ``threshold``
    of the CPUs; returns the seconds waited."""
    t0 = time.perf_counter()
    ncpu = os.cpu_count() or 1
    while time.perf_counter() - t0 < max_wait:
        b0 = _cpu_busy_s()
        if b0 is None:
            break
        time.sleep(window)
        if (_cpu_busy_s() - b0) / (window * ncpu) < threshold:
            break
    return time.perf_counter() - t0


LOCK_PATH = os.path.join(tempfile.gettempdir(), "neomx-bench.lock")


@contextlib.contextmanager
def machine_lock():
    """One measurement at a time on this machine: concurrent ``run.py`` invocations (two people
    benchmarking, or the smoke test during ``make bench``) take turns instead of disturbing each
    other's numbers."""
    try:
        f = open(LOCK_PATH, "a")
    except OSError:  # e.g. another user's lock file: measure unlocked
        yield
        return
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            print(f"  (waiting for another benchmark's measurement to finish: {LOCK_PATH})", flush=True)
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_one(python, peer, workload, opts, timeout):
    """One fresh worker process (holding the machine lock); returns its JSON record plus wall
    time and the CPU load of other processes meanwhile."""
    with machine_lock():
        return _run_one(python, peer, workload, opts, timeout)


def _run_one(python, peer, workload, opts, timeout):
    waited = wait_idle(opts.wait_idle) if opts.wait_idle > 0 else 0.0
    fd, path = tempfile.mkstemp(prefix=f"bench-{peer}-{workload}-", suffix=".json")
    os.close(fd)
    env = dict(os.environ)
    env.update(common.thread_env(opts.threads))
    env.setdefault("MPLBACKEND", "Agg")
    cmd = [python, str(HERE / "worker.py"), "--peer", peer, "--workload", workload,
           "--threads", str(opts.threads), "--result", path, "--seed", str(opts.seed)]
    if opts.quick:
        cmd.append("--quick")
    busy0, child0, t0 = _cpu_busy_s(), _children_cpu_s(), time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=str(REPO))
        rc, stderr = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, stderr = None, f"timed out after {timeout} s"
    wall = time.perf_counter() - t0
    busy1, child1 = _cpu_busy_s(), _children_cpu_s()
    try:
        with open(path) as f:
            rec = json.load(f)
    except (OSError, ValueError):
        rec = {"peer": peer, "workload": workload,
               "error": f"worker exit {rc}, no result; stderr tail:\n{stderr[-2000:]}"}
    finally:
        os.unlink(path)
    rec["wall_s"] = wall
    rec["waited_idle_s"] = waited
    if busy0 is not None and busy1 is not None:
        foreign = max(0.0, (busy1 - busy0) - (child1 - child0))
        rec["foreign_load"] = foreign / (wall * (os.cpu_count() or 1))
    return rec


def gemm_ceiling(opts):
    rec = run_one(sys.executable, "torch", "gemm", opts, timeout=300)
    if "error" in rec:
        print("  gemm ceiling failed:", rec["error"].strip().splitlines()[-1], flush=True)
        return None
    print(f"  GEMM ceiling (float32 {rec['extra']['n']}^2, {opts.threads} threads): "
          f"{rec['value']:.1f} GFLOP/s", flush=True)
    return rec["value"]


# --- summarising ----------------------------------------------------------------------------
def summarise(records):
    vals = [r["value"] for r in records if "value" in r]
    out = {"samples": vals, "errors": [r["error"] for r in records if "error" in r],
           "foreign_load_max": max((r.get("foreign_load", 0.0) for r in records), default=0.0),
           "records": records}
    if vals:
        out.update(median=statistics.median(vals), min=min(vals), max=max(vals),
                   spread=(max(vals) - min(vals)) / 2 / statistics.median(vals) if statistics.median(vals) else 0.0)
    extras = {}
    for r in records:
        for k, v in (r.get("extra") or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                extras.setdefault(k, []).append(v)
    imports = [r["import_s"] for r in records if "import_s" in r]
    if imports:
        extras["import_s"] = imports
    out["extra_median"] = {k: statistics.median(v) for k, v in extras.items()}
    return out


def _fmt(v, unit):
    if v is None:
        return "-"
    if unit == "MiB":
        return f"{v:.0f}"
    if unit == "us/op":
        return f"{v:.1f}"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def _extra_row(w, peers, label, unit, fmt):
    """A table row from each peer's median extras (``-`` where they are missing)."""
    row = [label, unit]
    for p in peers:
        try:
            row.append(fmt(w["peers"].get(p, {}).get("extra_median", {})))
        except KeyError:
            row.append("-")
    return row


def build_table(result):
    peers = result["meta"]["requested_peers"]
    skipped = result["meta"]["skipped"]
    others = [p for p in peers if p != "neomx"]
    cols = ["workload", "unit"] + [PEER_LABEL[p] for p in peers]
    for p in others:
        cols.append(f"{PEER_LABEL[p]}/neomx" if "neomx" in peers else "")
    rows = []
    for name, w in result["workloads"].items():
        unit = w["unit"]
        row = [name, unit]
        for p in peers:
            s = w["peers"].get(p, {})
            if "median" in s:
                row.append(f"{_fmt(s['median'], unit)} ±{100 * s['spread']:.0f}%")
            else:
                row.append("skipped" if p in skipped else ("error" if s.get("errors") else "-"))
        for p in others:
            r = w["peers"].get(p, {}).get("ratio")
            row.append(f"{r:.2f}x" if r else "-")
        rows.append(row)
        if name in ("lenet", "lenet-2dev"):
            ceil = result.get("gemm_ceiling_gflops")
            row = ["  GFLOP/s", "GFLOP/s (% GEMM)" if ceil else "GFLOP/s"]
            for p in peers:
                g = w["peers"].get(p, {}).get("extra_median", {}).get("gflops")
                row.append("-" if g is None else (f"{g:.1f} ({100 * g / ceil:.0f}%)" if ceil else f"{g:.1f}"))
            rows.append(row + [""] * len(others))
        if name == "dist":
            rows.append(_extra_row(w, peers, "  samples/s", "1 -> 2 workers",
                                   lambda ex: f"{ex['sps_1w']:.0f} -> {ex['sps_2w']:.0f}")
                        + [""] * len(others))
            rows.append(_extra_row(w, peers, "  all-reduce", "ms/step (floor)",
                                   lambda ex: (f"{ex['allreduce_ms_step']:.1f}"
                                               if "allreduce_ms_step" in ex else "-")
                                   + f" ({ex['allreduce_ms_micro']:.1f})")
                        + [""] * len(others))
        if name == "bind":
            row = ["  import", "s"]
            for p in peers:
                g = w["peers"].get(p, {}).get("extra_median", {}).get("import_s")
                row.append("-" if g is None else f"{g:.2f}")
            rows.append(row + [""] * len(others))
    widths = [max(len(str(r[i])) for r in [cols] + rows) for i in range(len(cols))]
    line = lambda r: "  ".join(str(c).ljust(wd) if i < 2 else str(c).rjust(wd)  # noqa: E731
                               for i, (c, wd) in enumerate(zip(r, widths)))
    out = [line(cols), line(["-" * wd for wd in widths])] + [line(r) for r in rows]
    return "\n".join(out)


def check_targets(result):
    lines = []
    for name, targets in TARGETS.items():
        w = result["workloads"].get(name)
        if not w:
            continue
        me = w["peers"].get("neomx", {}).get("median")
        for peer, factor in targets:
            if me is None:
                continue
            if peer == "abs":
                ok = me < factor
                lines.append(f"  {name:<11} neomx {_fmt(me, w['unit'])} {w['unit']} (target < {factor} {w['unit']}): "
                             f"{'met' if ok else 'NOT met'}")
                continue
            other = w["peers"].get(peer, {}).get("median")
            if other is None:
                lines.append(f"  {name:<11} neomx <= {factor} x {PEER_LABEL[peer]}: no {PEER_LABEL[peer]} number")
                continue
            frac = me / other
            lines.append(f"  {name:<11} neomx = {frac:.2f} x {PEER_LABEL[peer]} (target <= {factor}): "
                         f"{'met' if frac <= factor else 'NOT met'}")
    return lines


def plot(result, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    names = list(result["workloads"])
    peers = result["meta"]["peers"]
    colors = {"neomx": "#d62728", "mxnet": "#1f77b4", "torch": "#ff7f0e"}
    ncols = min(3, len(names))
    nrows = (len(names) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.4 * nrows), squeeze=False)
    for ax in axes.flat[len(names):]:
        ax.axis("off")
    for ax, name in zip(axes.flat, names):
        w = result["workloads"][name]
        xs, meds, lo, hi, cs, labels = [], [], [], [], [], []
        for i, p in enumerate(peers):
            s = w["peers"].get(p, {})
            if "median" not in s:
                continue
            xs.append(i)
            meds.append(s["median"])
            lo.append(s["median"] - s["min"])
            hi.append(s["max"] - s["median"])
            cs.append(colors.get(p, "grey"))
            labels.append(PEER_LABEL[p])
        ax.bar(xs, meds, yerr=[lo, hi], color=cs, capsize=4)
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, fontsize=8)
        for x, p, m, up in zip(xs, [peers[i] for i in xs], meds, hi):
            r = w["peers"][p].get("ratio")
            txt = _fmt(m, w["unit"]) + (f"\n{r:.2f}x" if r else "")
            ax.annotate(txt, (x, m + up), ha="center", va="bottom", fontsize=7,
                        xytext=(0, 3), textcoords="offset points")
        ax.set_title(f"{name} ({w['unit']}, lower is better)", fontsize=9)
        ax.margins(y=0.25)
    m = result["meta"]
    fig.suptitle(f"neomx benchmarks: median of fresh processes, {m['threads']} threads, "
                 f"error bars min-max; ratio = peer / neomx{' (QUICK)' if m['quick'] else ''}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _git_rev():
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                             text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "neomx"], cwd=REPO, capture_output=True,
                               text=True).stdout.strip()
        return rev + ("+dirty(neomx)" if dirty else "")
    except OSError:
        return None


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


# --- main -----------------------------------------------------------------------------------
def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", default=",".join(NAMES), help=f"comma list from {','.join(NAMES)}")
    p.add_argument("--peers", default=",".join(PEERS), help="comma list from neomx,mxnet,torch")
    p.add_argument("--repeats", type=int, default=None,
                   help="fresh processes per (peer, workload); default 5 (lenet, lenet-2dev, memory: 3), "
                        "with --quick 1")
    p.add_argument("--quick", action="store_true", help="fewer iterations and repeats: a smoke run")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="OpenMP/BLAS/torch threads for every peer (default: all cores, %(default)s)")
    p.add_argument("--out", default=str(HERE / "results"), help="folder for results.{json,txt,png}")
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic data and initialisation")
    p.add_argument("--oracle", default=os.environ.get("MXNET_ORACLE", str(REPO / "tools" / "mxnet-oracle")),
                   help="the script that provides MXNet 1.9.1's python, creating its venv on first use "
                        "(default: $MXNET_ORACLE or the project's tools/mxnet-oracle)")
    p.add_argument("--wait-idle", type=float, default=0.0, metavar="S",
                   help="before each measurement wait up to S seconds until other processes use < 10%% "
                        "of the CPUs (for shared machines; default 0: don't wait)")
    p.add_argument("--timeout", type=float, default=None, help="seconds per process (default 600, quick 180)")
    o = p.parse_args(argv)
    o.workloads = [w.strip() for w in o.workloads.split(",") if w.strip()]
    o.peers = [x.strip() for x in o.peers.split(",") if x.strip()]
    for w in o.workloads:
        if w not in NAMES:
            p.error(f"unknown workload {w!r} (known: {', '.join(NAMES)})")
    for x in o.peers:
        if x not in PEERS:
            p.error(f"unknown peer {x!r} (known: {', '.join(PEERS)})")
    o.peers = [x for x in PEERS if x in o.peers]  # neomx first
    if o.threads < 1:
        p.error("--threads must be >= 1")
    return o


def repeats_for(name, opts):
    if opts.repeats:
        return opts.repeats
    if opts.quick:
        return 1
    return 3 if name in HEAVY else 5


def main(argv=None):
    opts = parse_args(argv)
    started = time.time()
    timeout = opts.timeout or (180 if opts.quick else 600)
    notes = []
    pythons = {"neomx": sys.executable, "torch": sys.executable}
    peers = list(opts.peers)
    skipped = {}
    print(f"neomx benchmarks{' (quick)' if opts.quick else ''}: {opts.threads} thread(s) for every peer "
          f"(OMP/MKL/OpenBLAS_NUM_THREADS, torch.set_num_threads); {os.cpu_count()} CPUs: {_cpu_model()}",
          flush=True)
    if "mxnet" in peers:
        py, info = find_mxnet_python(Path(opts.oracle), timeout=1800)
        if py is None:
            note = f"MXNet 1.9.1 skipped: {info}"
            notes.append(note)
            print("note:", note, flush=True)
            peers.remove("mxnet")
            skipped["mxnet"] = info
        else:
            pythons["mxnet"] = py
            print(f"MXNet {info} from {py}", flush=True)

    result = {"meta": {"peers": peers, "requested_peers": opts.peers, "threads": opts.threads,
                       "quick": opts.quick, "seed": opts.seed, "cpus": os.cpu_count(), "cpu": _cpu_model(),
                       "python": platform.python_version(), "neomx_git": _git_rev(),
                       "date": datetime.datetime.now().isoformat(timespec="seconds"),
                       "thread_env": common.thread_env(opts.threads), "skipped": skipped, "notes": notes},
              "workloads": {}}
    ceilings = []
    for name in opts.workloads:
        metric, unit, what = METRICS[name]
        if opts.quick:
            what += " [--quick: fewer iterations]"
        reps = repeats_for(name, opts)
        print(f"\n[{name}] {what}: {reps} repeat(s) x {len(peers)} peer(s)", flush=True)
        if name in ("lenet", "lenet-2dev") and not ceilings:
            c = gemm_ceiling(opts)
            if c:
                ceilings.append(c)
        recs = {p: [] for p in peers}
        for r in range(reps):
            k = r % len(peers)
            for peer in peers[k:] + peers[:k]:  # rotate the order each repeat
                rec = run_one(pythons[peer], peer, name, opts, timeout)
                recs[peer].append(rec)
                if "error" in rec:
                    print(f"  {peer:<6} #{r + 1}: ERROR {rec['error'].strip().splitlines()[-1][:200]}", flush=True)
                else:
                    busy = rec.get("foreign_load", 0.0)
                    print(f"  {peer:<6} #{r + 1}: {_fmt(rec['value'], unit)} {unit}"
                          f"{f'   (other processes busy {100 * busy:.0f}%)' if busy > BUSY_WARN else ''}",
                          flush=True)
        if name in ("lenet", "lenet-2dev") and len(ceilings) < 2:
            c = gemm_ceiling(opts)
            if c:
                ceilings.append(c)
        w = {"metric": metric, "unit": unit, "what": what, "repeats": reps,
             "peers": {p: summarise(recs[p]) for p in peers}}
        base = w["peers"].get("neomx", {}).get("median")
        for p in peers:
            s = w["peers"][p]
            s["ratio"] = (s["median"] / base) if (p != "neomx" and base and "median" in s) else None
            bmin = w["peers"].get("neomx", {}).get("min")
            s["ratio_of_minima"] = (s["min"] / bmin) if (p != "neomx" and bmin and "min" in s) else None
        result["workloads"][name] = w
    if ceilings:
        result["gemm_ceiling_gflops"] = max(ceilings)
        result["gemm_ceiling_samples"] = ceilings

    busy = [(n, p, s["foreign_load_max"]) for n, w in result["workloads"].items()
            for p, s in w["peers"].items() if s["foreign_load_max"] > BUSY_WARN]
    if busy:
        notes.append("other processes used > 10% of the CPUs during some measurements (numbers are "
                     "unreliable there): " + ", ".join(f"{n}/{p} {100 * b:.0f}%" for n, p, b in busy))
    for n, w in result["workloads"].items():
        for p, s in w["peers"].items():
            if s["errors"]:
                notes.append(f"{n}/{p}: {len(s['errors'])} failed run(s): "
                             f"{s['errors'][0].strip().splitlines()[-1][:200]}")
    pool = {rec.get("cpu_pool") for w in result["workloads"].values()
            for rec in w["peers"].get("neomx", {}).get("records", [])} - {None}
    result["meta"]["neomx_cpu_pool"] = sorted(pool)
    if True in pool:
        notes.append("neomx ran with its opt-in CPU memory pool (NEOMX_CPU_MEM_POOL=1: glibc keeps freed "
                     "buffers for the whole process); by default it uses the C library's settings")
    if opts.quick:
        notes.append("--quick: fewer iterations and repeats; for smoke-testing the harness, not for numbers")

    table = build_table(result)
    targets = check_targets(result) if "neomx" in peers else []
    if "op-bench" in result["workloads"]:  # its per-operator table (workloads/op_bench.py)
        from workloads import op_bench
        result["op_table"] = op_bench.table(result["workloads"]["op-bench"], peers)
    result["meta"]["duration_s"] = time.time() - started
    text = [f"neomx benchmarks ({result['meta']['date']}, neomx {result['meta']['neomx_git']}): "
            f"median of {'/'.join(sorted({str(w['repeats']) for w in result['workloads'].values()}))} fresh processes "
            f"per cell, ±half the min-max range; {opts.threads} thread(s) for every peer; "
            f"ratio = peer / neomx (> 1: neomx is faster / smaller)", "", table]
    if result.get("gemm_ceiling_gflops"):
        text.append(f"\nGEMM ceiling (float32 matmul, {opts.threads} threads, torch): "
                    f"{result['gemm_ceiling_gflops']:.1f} GFLOP/s; LeNet GFLOP/s count conv/fc forward+backward")
    if targets:
        text += ["", "targets (issue):"] + targets
    if result.get("op_table"):
        text += ["", result["op_table"]]
    if notes:
        text += ["", "notes:"] + [f"  - {n}" for n in notes]
    text.append(f"\n({result['meta']['duration_s']:.0f} s in all)")
    text = "\n".join(text)
    result["table"] = table
    result["targets"] = targets

    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "results.json", "w") as f:
        json.dump(result, f, indent=1)
    (out / "results.txt").write_text(text + "\n")
    png = out / "results.png"
    have_png = plot(result, png)
    print("\n" + text)
    print(f"\nwrote {out / 'results.json'}, {out / 'results.txt'}" + (f", {png}" if have_png else
                                                                       " (no matplotlib: no PNG)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
