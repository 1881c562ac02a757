"""Joining the torch.distributed process group that the ``dist_*`` KVStores talk through.

A worker learns its place from the environment, as ``torch.distributed``'s ``env://`` does:

* ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT`` (set by ``python -m neomx.launch``,
  ``torchrun`` or by hand; ``LOCAL_RANK``/``LOCAL_WORLD_SIZE`` are optional);
* under Slurm, ``SLURM_PROCID``/``SLURM_NTASKS``/``SLURM_LOCALID`` stand in for the first three
  (``MASTER_ADDR``/``MASTER_PORT`` must still be exported, e.g. the first node of the job).

Rank 0 hosts a ``TCPStore`` at ``MASTER_ADDR:MASTER_PORT`` (under torchrun the agent hosts it).
Before the Gloo/NCCL group is built, every worker announces ``(rank, world size, host)`` in the
store, so start-up mistakes fail fast with an MXNetError that says what is wrong: an unreachable
master, two different ``WORLD_SIZE`` values, two workers with the same ``RANK``, or ranks that
never joined. Every wait is bounded by the store's timeout (``MXNET_KVSTORE_TIMEOUT`` seconds,
default 300), which also bounds each collective afterwards.

A process has at most one default group (torch's): the first dist store creates it (or adopts
one the program created with ``torch.distributed.init_process_group``) and later stores share it.
"""
from __future__ import annotations

import atexit
import dataclasses
import datetime
import os
import socket
import time

import torch
import torch.distributed as dist

from ..base import MXNetError

__all__ = ["WorkerEnv", "Session", "worker_env", "join", "timeout_from_env", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 300.0
_LAUNCH_HINT = ("start the workers with `python -m neomx.launch -n <workers> python train.py ...`, "
                "`torchrun --nproc-per-node <workers> train.py ...`, or srun with MASTER_ADDR and "
                "MASTER_PORT exported")


@dataclasses.dataclass(frozen=True)
class WorkerEnv:
    """Where this worker stands, read from the environment."""

    rank: int
    world_size: int
    master_addr: str
    master_port: int
    local_rank: int = 0
    local_world_size: int = 1
    agent_store: bool = False  # torchrun's agent hosts the TCPStore: every worker is a client
    restart: int = 0           # torchrun's restart count (keys of earlier attempts are ignored)


@dataclasses.dataclass
class Session:
    """The process group the dist stores of this process share."""

    rank: int
    world_size: int
    backend: str
    timeout: float
    local_world_size: int = 1
    owned: bool = True          # created here (so destroyed at exit) or adopted from the program
    failure: str | None = None  # the first collective failure; later collectives refuse to run


_session: Session | None = None


def _int_env(environ, name, what):
    raw = environ.get(name)
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise MXNetError(f"{what}: {name}={raw!r} is not an integer") from None


def worker_env(environ=None, store_name="dist_sync") -> WorkerEnv:
    """Read this worker's rank, world size and master address (MXNetError when incomplete)."""
    environ = os.environ if environ is None else environ
    what = f"kvstore '{store_name}'"
    if "RANK" not in environ and "SLURM_PROCID" in environ:
        rank_var, size_var, local_var = "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"
    else:
        rank_var, size_var, local_var = "RANK", "WORLD_SIZE", "LOCAL_RANK"
    missing = [v for v in (rank_var, size_var, "MASTER_ADDR", "MASTER_PORT") if not environ.get(v)]
    if missing:
        raise MXNetError(
            f"{what} runs on torch.distributed: each worker needs {rank_var}, {size_var}, "
            f"MASTER_ADDR and MASTER_PORT in its environment (missing: {', '.join(missing)}); "
            f"{_LAUNCH_HINT}")
    rank = _int_env(environ, rank_var, what)
    world_size = _int_env(environ, size_var, what)
    port = _int_env(environ, "MASTER_PORT", what)
    if world_size < 1:
        raise MXNetError(f"{what}: {size_var}={world_size} must be at least 1")
    if not 0 <= rank < world_size:
        raise MXNetError(f"{what}: {rank_var}={rank} is outside [0, {size_var}={world_size}): "
                         f"is {size_var} the number of workers started?")
    if not 0 < port < 65536:
        raise MXNetError(f"{what}: MASTER_PORT={port} is not a TCP port")
    local_rank = _int_env(environ, local_var, what) if environ.get(local_var) else 0
    local_ws = (_int_env(environ, "LOCAL_WORLD_SIZE", what) if environ.get("LOCAL_WORLD_SIZE")
                else (_int_env(environ, "SLURM_NTASKS_PER_NODE", what)
                      if environ.get("SLURM_NTASKS_PER_NODE", "").isdigit() else 1))
    return WorkerEnv(rank=rank, world_size=world_size, master_addr=environ["MASTER_ADDR"],
                     master_port=port, local_rank=local_rank, local_world_size=local_ws,
                     agent_store=environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True",
                     restart=int(environ.get("TORCHELASTIC_RESTART_COUNT", "0") or 0))


def timeout_from_env(environ=None) -> float:
    """``MXNET_KVSTORE_TIMEOUT`` in seconds (default 300)."""
    environ = os.environ if environ is None else environ
    raw = environ.get("MXNET_KVSTORE_TIMEOUT")
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise MXNetError(f"MXNET_KVSTORE_TIMEOUT={raw!r} is not a number of seconds") from None
    if value <= 0:
        raise MXNetError(f"MXNET_KVSTORE_TIMEOUT={raw!r} must be positive")
    return value


def _backend(env: WorkerEnv, environ) -> str:
    """Gloo for CPU tensors; NCCL for CUDA tensors when every local worker has its own GPU."""
    choice = environ.get("MXNET_KVSTORE_BACKEND", "auto").lower()
    if choice not in ("auto", "gloo", "nccl"):
        raise MXNetError(f"MXNET_KVSTORE_BACKEND={choice!r}: expected auto, gloo or nccl")
    nccl_ok = torch.cuda.is_available() and dist.is_nccl_available()
    if choice == "nccl" and not nccl_ok:
        raise MXNetError("MXNET_KVSTORE_BACKEND=nccl but this torch has no CUDA/NCCL")
    if choice == "nccl" or (choice == "auto" and nccl_ok
                            and torch.cuda.device_count() >= env.local_world_size):
        return "cpu:gloo,cuda:nccl"
    return "gloo"


# --- start-up ---------------------------------------------------------------------------------
def _wait_reachable(env: WorkerEnv, timeout: float, what: str) -> None:
    """Poll the master's port until it accepts a connection (a clean error instead of the
    store client's retries)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            socket.create_connection((env.master_addr, env.master_port),
                                     timeout=max(0.1, min(2.0, deadline - time.monotonic()))).close()
            return
        except socket.gaierror as e:
            raise MXNetError(f"{what}: cannot resolve MASTER_ADDR={env.master_addr!r} ({e})") from None
        except OSError as e:
            last = e
        if time.monotonic() >= deadline:
            raise MXNetError(
                f"{what}: rank {env.rank} cannot reach the master (rank 0) at "
                f"{env.master_addr}:{env.master_port} within {timeout:g} s ({last}): is rank 0 "
                "running, and are MASTER_ADDR/MASTER_PORT its address and a port open to the "
                "other machines? (MXNET_KVSTORE_TIMEOUT sets the wait)")
        time.sleep(0.1)


def _connect_store(env: WorkerEnv, timeout: float, what: str):
    is_master = env.rank == 0 and not env.agent_store
    if not is_master:
        _wait_reachable(env, timeout, what)
    try:
        store = dist.TCPStore(env.master_addr, env.master_port, None, is_master,
                              datetime.timedelta(seconds=timeout), wait_for_workers=False,
                              multi_tenant=True)
    except (RuntimeError, ValueError) as e:
        role = "host the rendezvous store on" if is_master else "connect to the rendezvous store at"
        raise MXNetError(f"{what}: rank {env.rank} could not {role} "
                         f"{env.master_addr}:{env.master_port}: {e}") from None
    return dist.PrefixStore(f"neomx/{env.restart}/", store)


def _handshake(store, env: WorkerEnv, timeout: float, what: str) -> None:
    """Every worker posts ``world_size host pid``; mismatches and absentees become errors."""
    me = f"{env.world_size} {socket.gethostname()} {os.getpid()}"
    if store.add(f"claims/{env.rank}", 1) > 1:
        raise MXNetError(f"{what}: another worker already joined with RANK={env.rank}: every "
                         "worker needs its own rank in [0, WORLD_SIZE)")
    store.set(f"join/{env.rank}", me)
    delta = datetime.timedelta(seconds=timeout)

    def wait(keys):
        try:
            store.wait(keys, delta)
            return []
        except RuntimeError:  # DistStoreError: report who is missing
            return [k for k in keys if not store.check([k])]

    if wait(["join/0"]):
        raise MXNetError(f"{what}: rank 0 did not join within {timeout:g} s")
    theirs = store.get("join/0").decode().split()
    if int(theirs[0]) != env.world_size:
        raise MXNetError(f"{what}: this worker (rank {env.rank}) has WORLD_SIZE={env.world_size} "
                         f"but rank 0 has WORLD_SIZE={theirs[0]}: every worker must be started "
                         "with the same WORLD_SIZE")
    missing = wait([f"join/{r}" for r in range(env.world_size)])
    if missing:
        ranks = [int(k.split("/")[1]) for k in missing]
        raise MXNetError(
            f"{what}: only {env.world_size - len(ranks)} of WORLD_SIZE={env.world_size} workers "
            f"joined within {timeout:g} s (missing ranks {ranks}): is WORLD_SIZE the number of "
            f"workers started, and did they all start? ({_LAUNCH_HINT})")
    if env.rank == 0:
        for r in range(1, env.world_size):
            ws = int(store.get(f"join/{r}").decode().split()[0])
            if ws != env.world_size:
                raise MXNetError(f"{what}: rank {r} has WORLD_SIZE={ws} but rank 0 has "
                                 f"WORLD_SIZE={env.world_size}: every worker must be started "
                                 "with the same WORLD_SIZE")


def join(store_name: str, timeout: float | None = None, environ=None) -> Session:
    """The process group of this process, created on first use (see the module docstring)."""
    global _session
    if _session is not None:
        return _session
    environ = os.environ if environ is None else environ
    what = f"kvstore '{store_name}'"
    if dist.is_available() and dist.is_initialized():  # the program built its own group
        backend = str(dist.get_backend())
        _session = Session(rank=dist.get_rank(), world_size=dist.get_world_size(),
                           backend=backend, timeout=timeout or timeout_from_env(environ),
                           owned=False)
        return _session
    if not dist.is_available():
        raise MXNetError(f"{what}: this torch build has no torch.distributed")
    env = worker_env(environ, store_name)
    timeout = timeout or timeout_from_env(environ)
    backend = _backend(env, environ)
    store = _connect_store(env, timeout, what)
    try:
        _handshake(store, env, timeout, what)
    except MXNetError:
        raise
    except RuntimeError as e:  # the store went away (rank 0 died during start-up)
        raise MXNetError(f"{what}: rank {env.rank} lost the rendezvous store at "
                         f"{env.master_addr}:{env.master_port} during start-up: {e}") from None
    try:
        dist.init_process_group(backend, store=store, rank=env.rank, world_size=env.world_size,
                                timeout=datetime.timedelta(seconds=timeout))
    except (RuntimeError, ValueError) as e:
        raise MXNetError(f"{what}: rank {env.rank} could not build the {backend} process group "
                         f"of {env.world_size} workers: {e}") from None
    _session = Session(rank=env.rank, world_size=env.world_size, backend=backend,
                       timeout=timeout, local_world_size=env.local_world_size)
    atexit.register(_shutdown)
    return _session


def _shutdown() -> None:
    """At exit: release the group we created (joining its threads before the interpreter
    goes; peers still waiting learn of the exit from the closed connections)."""
    s = _session
    if s is None or not s.owned or not dist.is_initialized():
        return
    try:
        dist.destroy_process_group()
    except Exception:  # noqa: BLE001  exiting anyway
        pass
