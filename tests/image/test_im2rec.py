"""python -m neomx.tools.im2rec against MXNet 1.9.1's tools/im2rec.py: the runs of
tests/golden/image/im2rec/runs.json (made by tools/make_golden_image.py) give the same .lst,
.idx and .rec files (so MXNet reads neomx's)."""
from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest

import neomx as mx
from neomx.tools import im2rec

from ._helpers import GOLDEN, load_json, needs_cv2

pytestmark = needs_cv2
IM2REC = GOLDEN / "im2rec"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    shutil.copytree(IM2REC / "src", tmp_path / "src")
    shutil.copy(IM2REC / "multi.lst", tmp_path / "multi.lst")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def records(prefix):
    r = mx.recordio.MXIndexedRecordIO(str(prefix) + ".idx", str(prefix) + ".rec", "r")
    out = {k: mx.recordio.unpack(r.read_idx(k)) for k in r.keys}
    r.close()
    return out


def test_runs_match_mxnet(workdir, capsys):
    runs = load_json("im2rec/runs.json")["runs"]
    for prefix, extra in runs:
        assert im2rec.main([prefix, "src"] + extra + ["--no-progress"]) == 0
    made = sorted(p.name for p in workdir.iterdir() if p.suffix in (".lst", ".idx", ".rec"))
    want = sorted(p.name for p in IM2REC.iterdir() if p.suffix in (".lst", ".idx", ".rec"))
    assert made == want
    for name in made:
        if name.endswith(".rec"):
            continue
        assert (workdir / name).read_bytes() == (IM2REC / name).read_bytes(), name
    for prefix in ("all", "multi"):
        ours, theirs = records(workdir / prefix), records(IM2REC / prefix)
        assert list(ours) == list(theirs)
        for key, (h, img) in ours.items():
            h2, img2 = theirs[key]
            assert (h.flag, h.id, h.id2) == (h2.flag, h2.id, h2.id2)
            np.testing.assert_array_equal(np.asarray(h.label), np.asarray(h2.label))
            a, b = mx.image.imdecode(img).asnumpy(), mx.image.imdecode(img2).asnumpy()
            np.testing.assert_array_equal(a, b)
        # OpenCV 4.14's libjpeg-turbo/libpng encode as the oracle's OpenCV: identical files
        assert (workdir / f"{prefix}.rec").read_bytes() == (IM2REC / f"{prefix}.rec").read_bytes()
    assert "cat 0\ndog 1\n" in capsys.readouterr().out


def test_pack_options(workdir):
    (workdir / "bad.lst").write_text("0\t1.0\tcat/p0.jpg\n1\t2.0\tmissing.jpg\nbroken line\n"
                                     "x\t1\tcat/p1.png\n2\t3.0\tdog/../cat/p1.png\n")
    assert im2rec.main(["bad", "src", "--pass-through", "--num-thread", "3",
                        "--no-progress"]) == 0
    recs = records(workdir / "bad")
    assert list(recs) == [0, 2]
    assert recs[0][1] == (workdir / "src" / "cat" / "p0.jpg").read_bytes()
    assert im2rec.main(["bad", "src", "--color", "0", "--resize", "5", "--encoding", ".png",
                        "--no-progress"]) == 0
    img = mx.image.imdecode(records(workdir / "bad")[2][1], flag=0)
    assert img.shape[0] == 5 or img.shape[1] == 5
    assert im2rec.main(["nothing", "src"]) == 1


def test_list_options(workdir):
    im2rec.main(["flat", "src/cat", "--list", "--no-shuffle"])
    lines = (workdir / "flat.lst").read_text().splitlines()
    assert [ln.split("\t") for ln in lines] == [
        ["0", "0.000000", "p0.jpg"], ["1", "0.000000", "p1.png"], ["2", "0.000000", "p2.jpg"]]
    im2rec.main(["old", "src", "--list", "--recursive", "--shuffle", "False"])
    assert (workdir / "old.lst").read_text().startswith("0\t0.000000\tcat/p0.jpg\n")
    with pytest.raises(SystemExit):
        im2rec.parse_args(["p", "r", "--encoding", ".bmp"])


@pytest.mark.filterwarnings("ignore:.*found in sys.modules:RuntimeWarning")
def test_module_entry_point(workdir, monkeypatch, capsys):
    """``python -m neomx.tools.im2rec`` (run in-process with runpy) has MXNet's options."""
    import runpy
    monkeypatch.setattr(sys, "argv", ["im2rec", "--help"])
    with pytest.raises(SystemExit) as e:
        runpy.run_module("neomx.tools.im2rec", run_name="__main__")
    assert e.value.code == 0
    out = capsys.readouterr().out
    for option in ("--list", "--recursive", "--train-ratio", "--test-ratio", "--exts",
                   "--resize", "--center-crop", "--quality", "--encoding", "--num-thread",
                   "--pack-label", "--chunks", "--no-shuffle", "--pass-through", "--color"):
        assert option in out
