"""``python -m neomx.launch``: worker environments, hostfiles, ssh commands (built, not run),
failure propagation."""
from __future__ import annotations

import shlex
import subprocess
import sys
import time

import pytest

from neomx import launch


def test_worker_env_local_and_remote():
    hosts = ["a", "b", "a"]
    env = launch.worker_env(2, hosts, "a", 1234, {"OMP_NUM_THREADS": "2"})
    assert env == {"RANK": "2", "WORLD_SIZE": "3", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
                   "MASTER_ADDR": "a", "MASTER_PORT": "1234", "OMP_NUM_THREADS": "2"}


def test_parse_hostfile():
    text = "# cluster\nnode1 slots=2\n\nnode2:3  # comment\nuser@node3\n"
    assert launch.parse_hostfile(text) == [("node1", 2), ("node2", 3), ("user@node3", None)]
    with pytest.raises(ValueError, match="no hosts"):
        launch.parse_hostfile("# nothing\n")
    with pytest.raises(ValueError, match="line 1: cannot read 'cpus=4'"):
        launch.parse_hostfile("node1 cpus=4")


def test_assign_hosts():
    assert launch.assign_hosts([("a", None), ("b", None)], 5) == ["a", "b", "a", "b", "a"]
    assert launch.assign_hosts([("a", 2), ("b", 1)], 4) == ["a", "a", "b", "a"]


def test_ssh_commands():
    hosts = launch.parse_hostfile("alice@n1\nn2\n")
    cmds = launch.ssh_commands(hosts, 3, ["python", "train.py", "--lr", "0.1 0.2"],
                               extra_env={"MXNET_KVSTORE_TIMEOUT": "60"}, cwd="/shared/my job",
                               ssh_port=2222)
    assert len(cmds) == 3
    assert cmds[0][:7] == ["ssh", "-o", "StrictHostKeyChecking=no", "-o", "BatchMode=yes",
                           "-p", "2222"]
    assert [c[7] for c in cmds] == ["alice@n1", "n2", "alice@n1"]
    remote = cmds[2][8]
    assert remote.startswith("cd '/shared/my job' && env ")
    words = shlex.split(remote)
    assert words[words.index("env") + 1:words.index("python")] == [
        "RANK=2", "WORLD_SIZE=3", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=n1",
        "MASTER_PORT=29500", "MXNET_KVSTORE_TIMEOUT=60"]
    assert words[-4:] == ["python", "train.py", "--lr", "0.1 0.2"]
    other = launch.ssh_commands(hosts, 1, ["x"], master_addr="10.0.0.1", master_port=4000)
    assert "MASTER_ADDR=10.0.0.1 MASTER_PORT=4000" in other[0][-1]


def _py(code):
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True)


def test_supervise_success_and_failure():
    assert launch.supervise([_py("pass"), _py("pass")]) == 0
    logs = []
    t0 = time.monotonic()
    procs = [_py("import time; time.sleep(60)"), _py("import sys; sys.exit(7)")]
    assert launch.supervise(procs, kill_grace=0.2, log=logs.append) == 7
    assert time.monotonic() - t0 < 20
    assert procs[0].returncode is not None  # the sleeper was stopped
    assert "worker 1" in logs[0] and "exited with code 7" in logs[0]
    procs = [_py("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")]
    assert launch.supervise(procs, log=logs.append) == 137
    assert "killed by SIGKILL" in logs[-1]
    procs = [_py("import time; time.sleep(60)")]
    assert launch.supervise(procs, kill_grace=0, log=logs.append, timeout=0.3) == 124


def test_command_line(tmp_path):
    """The CLI sets the variables for every worker and exits with a failed worker's code."""
    script = tmp_path / "w.py"
    script.write_text("import os, sys\n"
                      "r = os.environ['RANK']\n"
                      "open(sys.argv[1] + r, 'w').write(' '.join(os.environ[k] for k in "
                      "('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'MASTER_ADDR', 'FOO')))\n"
                      "sys.exit(5 if r == '2' else 0)\n")
    p = subprocess.run([sys.executable, "-m", "neomx.launch", "-n", "3", "-s", "2", "--env",
                        "FOO=bar", sys.executable, str(script), str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 5, p.stderr
    assert "-s 2 ignored" in p.stderr and "worker 2" in p.stderr
    assert (tmp_path / "out0").read_text() == "0 3 0 127.0.0.1 bar"
    assert (tmp_path / "out1").read_text() == "1 3 1 127.0.0.1 bar"
