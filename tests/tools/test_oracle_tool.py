"""The project stands on its own: its reference environment is ``tools/mxnet-oracle``, not a path
outside the repository. These tests never create the MXNet env (no network, no 1.9.1 install):
they check the script's form and drive it against stand-in environments."""
from __future__ import annotations

import os
import pathlib
import shutil
import stat
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ORACLE = REPO / "tools" / "mxnet-oracle"
OUTSIDE = "../" + "shared/tools"  # split, so that this file does not match itself


def _repo_files():
    """Files git tracks (outside shared/); without git, every file under the repository."""
    git = shutil.which("git")
    if git and (REPO / ".git").exists():
        p = subprocess.run([git, "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
        names = [n for n in p.stdout.decode().split("\0") if n]
    else:
        skip = {".git", ".venv", "shared", "build", "out", "__pycache__"}
        names = [str(f.relative_to(REPO)) for f in REPO.rglob("*")
                 if f.is_file() and not skip.intersection(f.relative_to(REPO).parts)
                 and not any(part.endswith(".egg-info") for part in f.relative_to(REPO).parts)]
    return [n for n in names if not n.startswith("shared/")]


def test_no_file_refers_outside_the_repository():
    offenders = []
    for name in _repo_files():
        path = REPO / name
        if not path.is_file():  # deleted in the working tree
            continue
        data = path.read_bytes()
        if OUTSIDE.encode() in data:
            offenders.append(name)
    assert offenders == [], f"these files send contributors to {OUTSIDE} (use tools/mxnet-oracle): {offenders}"


def test_oracle_script_is_executable_bash():
    assert ORACLE.is_file()
    assert os.access(ORACLE, os.X_OK), "tools/mxnet-oracle must be executable (chmod +x)"
    assert ORACLE.read_text().startswith("#!/usr/bin/env bash\n")
    p = subprocess.run(["bash", "-n", str(ORACLE)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_oracle_script_is_executable_in_git():
    """A clone gets the executable bit only if git records it (mode 100755)."""
    git = shutil.which("git")
    if not (git and (REPO / ".git").exists()):
        pytest.skip("not a git checkout")
    p = subprocess.run([git, "ls-files", "-s", "--", "tools/mxnet-oracle"], cwd=REPO,
                       capture_output=True, text=True, check=True)
    if not p.stdout.strip():
        pytest.skip("tools/mxnet-oracle is not committed yet")
    assert p.stdout.split()[0] == "100755", p.stdout


def _fake_env(root: pathlib.Path) -> pathlib.Path:
    """A stand-in for a ready oracle env: bin/python passes the readiness check (-c ...) and echoes
    any other arguments, so the script's plumbing runs without MXNet."""
    env = root / "oracle"
    (env / "bin").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr/bin\n")
    py = env / "bin" / "python"
    py.write_text('#!/usr/bin/env bash\nif [ "$1" = -c ]; then exit 0; fi\necho "fake-python $*"\n')
    py.chmod(py.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return env


def _run(env_dir, *args):
    env = dict(os.environ, MXNET_ORACLE_DIR=str(env_dir))
    return subprocess.run([str(ORACLE), *args], capture_output=True, text=True, env=env, timeout=60)


def test_oracle_prints_the_interpreter_of_a_ready_env(tmp_path):
    env = _fake_env(tmp_path)
    p = _run(env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"{env}/bin/python\n"  # stdout carries the path alone
    p = _run(str(env) + "/")  # a trailing slash names the same env
    assert p.stdout == f"{env}/bin/python\n"


def test_oracle_runs_its_arguments_with_the_interpreter(tmp_path):
    env = _fake_env(tmp_path)
    p = _run(env, "script.py", "--flag", "two words")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "fake-python script.py --flag two words\n"


def test_oracle_never_clears_a_folder_that_is_not_a_venv(tmp_path):
    target = tmp_path / "not-a-venv"
    target.mkdir()
    (target / "precious.txt").write_text("keep me")
    p = _run(target)
    assert p.returncode != 0
    assert "not a virtual environment" in p.stderr
    assert (target / "precious.txt").read_text() == "keep me"
    assert sorted(os.listdir(target)) == ["precious.txt"]
