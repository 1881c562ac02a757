"""Start the workers of a distributed job (MXNet's ``tools/launch.py``, on torch.distributed).

    python -m neomx.launch -n 2 python train.py --kv-store dist_sync
    python -m neomx.launch -n 4 --launcher ssh -H hosts python train.py --kv-store dist_sync

Each worker runs the command with ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``,
``MASTER_ADDR`` and ``MASTER_PORT`` set -- what ``mx.kv.create('dist_sync')`` (and
``torch.distributed``'s ``env://``) reads. There are no server processes: the dist stores
all-reduce among the workers, so ``-s``/``--num-servers`` is accepted and ignored.

* ``--launcher local`` (default): ``-n`` processes on this machine, master ``127.0.0.1`` on a
  free port (or ``--master-port``).
* ``--launcher ssh``: one ``ssh`` per worker to the hosts of ``-H`` (one host per line, an
  optional ``slots=N`` or ``host:N``; ``#`` comments). Without slots the workers go round-robin
  over the hosts (as MXNet's launcher does); with slots each host takes that many in turn.
  Rank 0 runs on the first host, which is the master (``--master-addr`` to override; the port
  defaults to 29500). Workers ``cd`` to this directory: the code and data must be at the same
  path on every host (a shared file system), and ssh must log in without a password.

The launcher watches the workers: when one fails it says which, gives the others
``--kill-grace`` seconds to fail on their own (the dist store reports the lost worker as an
MXNetError), stops the rest and exits with the failed worker's code (128 + signal for a
signal). ``Ctrl-C`` stops every worker.

Workers started by another launcher need nothing from this one: torchrun sets the same
variables, and under Slurm ``SLURM_PROCID``/``SLURM_NTASKS`` are read (export ``MASTER_ADDR``
and ``MASTER_PORT``).
"""
from __future__ import annotations

import argparse
import os
import shlex
import signal
import socket
import subprocess
import sys
import time

__all__ = ["main", "launch_local", "parse_hostfile", "assign_hosts", "worker_env",
           "ssh_commands", "free_port", "supervise"]

DEFAULT_SSH_PORT = 29500


# --- pieces (tested on their own) ---------------------------------------------------------------
def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def parse_hostfile(text: str) -> list:
    """``[(host, slots or None)]`` from a hostfile's text (``host``, ``host slots=N``,
    ``host:N``; blank lines and ``#`` comments skipped)."""
    hosts = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        host, slots = fields[0], None
        if ":" in host and host.rsplit(":", 1)[1].isdigit():
            host, n = host.rsplit(":", 1)
            slots = int(n)
        for f in fields[1:]:
            key, _, value = f.partition("=")
            if key in ("slots", "max_slots") and value.isdigit():
                slots = int(value)
            else:
                raise ValueError(f"hostfile line {lineno}: cannot read {f!r} (expected slots=N)")
        if slots is not None and slots < 1:
            raise ValueError(f"hostfile line {lineno}: slots must be at least 1")
        hosts.append((host, slots))
    if not hosts:
        raise ValueError("the hostfile lists no hosts")
    return hosts


def assign_hosts(hosts: list, num_workers: int) -> list:
    """The host of each rank: round-robin without slots, else each host's slots in turn."""
    if all(slots is None for _, slots in hosts):
        return [hosts[i % len(hosts)][0] for i in range(num_workers)]
    order = [h for h, slots in hosts for _ in range(slots or 1)]
    return [order[i % len(order)] for i in range(num_workers)]


def worker_env(rank: int, hosts_of_ranks: list, master_addr: str, master_port: int,
               extra: dict | None = None) -> dict:
    """The variables worker ``rank`` needs (``hosts_of_ranks[r]`` is rank r's host)."""
    host = hosts_of_ranks[rank]
    env = {
        "RANK": str(rank),
        "WORLD_SIZE": str(len(hosts_of_ranks)),
        "LOCAL_RANK": str(sum(1 for h in hosts_of_ranks[:rank] if h == host)),
        "LOCAL_WORLD_SIZE": str(sum(1 for h in hosts_of_ranks if h == host)),
        "MASTER_ADDR": master_addr,
        "MASTER_PORT": str(master_port),
    }
    env.update(extra or {})
    return env


def _ssh_target_address(host: str) -> str:
    return host.rsplit("@", 1)[-1]


def ssh_commands(hosts: list, num_workers: int, command: list, master_addr: str | None = None,
                 master_port: int = DEFAULT_SSH_PORT, extra_env: dict | None = None,
                 cwd: str | None = None, ssh_port: int | None = None) -> list:
    """One ``ssh`` argv per worker: ``cd`` to ``cwd``, set the worker's variables, run
    ``command``. ``hosts`` is ``parse_hostfile``'s result; rank 0's host is the master unless
    ``master_addr`` is given."""
    placed = assign_hosts(hosts, num_workers)
    master = master_addr or _ssh_target_address(placed[0])
    cwd = cwd or os.getcwd()
    cmds = []
    for rank in range(num_workers):
        env = worker_env(rank, placed, master, master_port, extra_env)
        remote = "cd {} && env {} {}".format(
            shlex.quote(cwd), " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()),
            shlex.join(command))
        argv = ["ssh", "-o", "StrictHostKeyChecking=no", "-o", "BatchMode=yes"]
        if ssh_port:
            argv += ["-p", str(ssh_port)]
        cmds.append(argv + [placed[rank], remote])
    return cmds


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _stop(procs, sig) -> None:
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def _exit_code(code: int) -> int:
    return 128 - code if code < 0 else code


def _terminate(procs, poll: float) -> None:
    """SIGTERM the workers still running, SIGKILL them 5 s later, reap them all."""
    _stop(procs, signal.SIGTERM)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(poll)
    _stop(procs, signal.SIGKILL)
    for p in procs:
        p.wait()


def supervise(procs: list, kill_grace: float = 10.0, log=None, poll: float = 0.05,
              timeout: float | None = None) -> int:
    """Wait for the workers; on the first failure stop the others (after ``kill_grace`` s).

    Returns 0 when every worker succeeded, else the first failure's exit code (128 + signal
    number for a signal); after ``timeout`` seconds (None: no limit) every worker is stopped
    and 124 returned. The workers must lead their own process groups.
    """
    log = log or _log
    start = time.monotonic()
    failure = None  # (exit code to return, when the others were told to stop)
    try:
        while True:
            codes = [p.poll() for p in procs]
            now = time.monotonic()
            if failure is None:
                bad = [(r, c) for r, c in enumerate(codes) if c not in (None, 0)]
                if bad:
                    alive = codes.count(None)
                    log("; ".join(f"worker {r} (pid {procs[r].pid}) {_describe_exit(c)}"
                                  for r, c in bad)
                        + (f"; stopping the other {alive} worker(s) in {kill_grace:g} s"
                           if alive else ""))
                    failure = (_exit_code(bad[0][1]), now)
                elif timeout is not None and now - start > timeout and None in codes:
                    log(f"the workers did not finish within {timeout:g} s: stopping them")
                    failure = (124, now - kill_grace)
            if None not in codes:
                break
            if failure is not None and now - failure[1] >= kill_grace:
                _terminate(procs, poll)
                break
            time.sleep(poll)
    except KeyboardInterrupt:
        log("interrupted: stopping every worker")
        _stop(procs, signal.SIGINT)
        time.sleep(1.0)
        _terminate(procs, poll)
        return 130
    return 0 if failure is None else failure[0]


def _log(msg: str) -> None:
    print(f"neomx.launch: {msg}", file=sys.stderr, flush=True)


def launch_local(command: list, num_workers: int, master_addr: str = "127.0.0.1",
                 master_port: int | None = None, extra_env: dict | None = None,
                 kill_grace: float = 10.0, timeout: float | None = None, log=None) -> int:
    """Run ``command`` as ``num_workers`` workers on this machine and ``supervise`` them;
    returns the exit code ``python -m neomx.launch`` would."""
    port = master_port or free_port(master_addr)
    placed = ["localhost"] * num_workers
    procs = []
    for rank in range(num_workers):
        env = dict(os.environ)
        env.update(worker_env(rank, placed, master_addr, port, extra_env))
        procs.append(subprocess.Popen(command, env=env, start_new_session=True))
    return supervise(procs, kill_grace, log, timeout=timeout)


def _terminated(signum, frame):
    raise KeyboardInterrupt


# --- command line ---------------------------------------------------------------------------------
def _parse_env_pairs(pairs) -> dict:
    out = {}
    for item in pairs or []:
        sep = "=" if "=" in item else ":"
        key, found, value = item.partition(sep)
        if not found or not key:
            raise SystemExit(f"neomx.launch: --env expects NAME=VALUE (or NAME:VALUE), got {item!r}")
        out[key] = value
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m neomx.launch", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--num-workers", required=True, type=int, help="number of workers")
    p.add_argument("-s", "--num-servers", type=int, default=None,
                   help="ignored: neomx's dist stores have no servers (kept for MXNet scripts)")
    p.add_argument("--launcher", choices=("local", "ssh"), default="local")
    p.add_argument("-H", "--hostfile", help="hosts for --launcher ssh")
    p.add_argument("--master-addr", default=None,
                   help="address of rank 0 (local: 127.0.0.1; ssh: the first host)")
    p.add_argument("--master-port", type=int, default=None,
                   help=f"port of rank 0's rendezvous store (local: a free one; ssh: {DEFAULT_SSH_PORT})")
    p.add_argument("--ssh-port", type=int, default=None, help="ssh port of the hosts")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds a worker waits for the others (MXNET_KVSTORE_TIMEOUT; default 300)")
    p.add_argument("--kill-grace", type=float, default=10.0,
                   help="seconds the other workers get to exit after one failed (default 10)")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="set a variable for every worker (repeatable; NAME:VALUE also works)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command each worker runs")
    o = p.parse_args(argv)
    if o.command and o.command[0] == "--":
        o.command = o.command[1:]
    if not o.command:
        p.error("no command given (e.g. python train.py)")
    if o.num_workers < 1:
        p.error("-n must be at least 1")
    if o.launcher == "ssh" and not o.hostfile:
        p.error("--launcher ssh needs -H HOSTFILE")
    return o


def main(argv=None) -> int:
    o = parse_args(argv)
    signal.signal(signal.SIGTERM, _terminated)  # stop the workers too when we are stopped
    if o.num_servers:
        _log(f"-s {o.num_servers} ignored: there are no servers (workers all-reduce)")
    extra = _parse_env_pairs(o.env)
    if o.timeout is not None:
        extra["MXNET_KVSTORE_TIMEOUT"] = str(o.timeout)
    if o.launcher == "ssh":
        with open(o.hostfile) as f:
            hosts = parse_hostfile(f.read())
        cmds = ssh_commands(hosts, o.num_workers, o.command, o.master_addr,
                            o.master_port or DEFAULT_SSH_PORT, extra, ssh_port=o.ssh_port)
        procs = [subprocess.Popen(c, start_new_session=True) for c in cmds]
        return supervise(procs, o.kill_grace)
    return launch_local(o.command, o.num_workers, o.master_addr or "127.0.0.1", o.master_port,
                        extra, o.kill_grace)


if __name__ == "__main__":
    sys.exit(main())
