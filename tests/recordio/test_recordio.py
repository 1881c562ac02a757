"""mx.recordio against MXNet 1.9.1's files (tests/golden/recordio, tools/make_golden_recordio.py):
byte-identical writes, reads of MXNet's files, pack/unpack, hostile files, pickling."""
from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import random
import struct
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "recordio"
MAGIC = struct.pack("<I", 0xCED7230A)


@pytest.fixture(scope="module")
def golden():
    with open(GOLDEN / "records.json") as f:
        g = json.load(f)
    g["items"] = [(r["key"], bytes.fromhex(r["payload"])) for r in g["records"]]
    return g


def write_indexed(tmp_path, items, name="n"):
    idx, rec = tmp_path / f"{name}.idx", tmp_path / f"{name}.rec"
    w = mx.recordio.MXIndexedRecordIO(str(idx), str(rec), "w")
    tells = [w.tell()]
    for key, s in items:
        w.write_idx(key, s)
        tells.append(w.tell())
    w.close()
    return idx, rec, tells


# ----------------------------------------------------------------------------- MXNet's bytes

def test_writes_mxnet_bytes(tmp_path, golden):
    idx, rec, tells = write_indexed(tmp_path, golden["items"])
    assert rec.read_bytes() == (GOLDEN / "mxnet.rec").read_bytes()
    assert idx.read_text() == (GOLDEN / "mxnet.idx").read_text()
    assert tells == golden["tell"]


def test_plain_writer_same_bytes(tmp_path, golden):
    w = mx.recordio.MXRecordIO(str(tmp_path / "p.rec"), "w")
    for _, s in golden["items"]:
        w.write(s)
    w.close()
    assert (tmp_path / "p.rec").read_bytes() == (GOLDEN / "mxnet.rec").read_bytes()


def test_reads_mxnet_file_sequentially(golden):
    r = mx.recordio.MXRecordIO(str(GOLDEN / "mxnet.rec"), "r")
    assert [r.read() for _ in golden["items"]] == [s for _, s in golden["items"]]
    assert r.read() is None and r.read() is None
    r.reset()
    assert r.read() == golden["items"][0][1]
    r.close()


def test_reads_mxnet_file_by_index(golden):
    r = mx.recordio.MXIndexedRecordIO(str(GOLDEN / "mxnet.idx"), str(GOLDEN / "mxnet.rec"), "r")
    assert r.keys == [k for k, _ in golden["items"]]
    order = list(golden["items"])
    random.Random(0).shuffle(order)
    for key, s in order:
        assert r.read_idx(key) == s
    key, s = golden["items"][5]
    r.seek(key)
    assert r.read() == s and r.read() == golden["items"][6][1]
    with pytest.raises(KeyError, match="not in the index"):
        r.read_idx(2)
    r.close()


def test_pack_unpack_match_mxnet(golden):
    for case in golden["pack"]:
        flag, label, id_, id2 = case["header"]
        header = mx.recordio.IRHeader(flag, label, id_, id2)
        payload = bytes.fromhex(case["payload"])
        packed = mx.recordio.pack(header, payload)
        assert packed.hex() == case["packed"], case
        h, rest = mx.recordio.unpack(bytes.fromhex(case["packed"]))
        want = case["unpacked"]
        assert (h.flag, h.id, h.id2, rest.hex()) == (want["flag"], want["id"], want["id2"],
                                                    want["rest"])
        if isinstance(want["label"], list):
            assert h.label.dtype == np.float32 and h.label.tolist() == want["label"]
        else:
            assert h.label == want["label"]
    assert repr(mx.recordio.IRHeader(1, 2, 3, 4)) == "HEADER(flag=1, label=2, id=3, id2=4)"


# ----------------------------------------------------------------------------- round trips

def test_round_trip_random_payloads(tmp_path):
    rng = np.random.RandomState(0)
    items = []
    for i in range(60):
        n = int(rng.randint(0, 64))
        chunks = [rng.bytes(int(rng.randint(0, 9))) if rng.rand() < 0.6 else MAGIC
                  for _ in range(n // 4)]
        items.append((i, b"".join(chunks)))
    idx, rec, tells = write_indexed(tmp_path, items)
    assert tells[-1] == rec.stat().st_size and all(t % 4 == 0 for t in tells)
    r = mx.recordio.MXIndexedRecordIO(str(idx), str(rec), "r")
    assert [r.read() for _ in items] == [s for _, s in items]
    assert all(r.read_idx(k) == s for k, s in reversed(items))


def test_string_keys(tmp_path):
    idx, rec = str(tmp_path / "s.idx"), str(tmp_path / "s.rec")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w", key_type=str)
    w.write_idx("b", b"B")
    w.write_idx("a", b"A")
    w.close()
    r = mx.recordio.MXIndexedRecordIO(idx, rec, "r", key_type=str)
    assert r.keys == ["b", "a"] and r.read_idx("a") == b"A"


def test_writer_state(tmp_path):
    path = str(tmp_path / "w.rec")
    w = mx.recordio.MXRecordIO(path, "w")
    w.write(b"abcde")
    w.write(bytearray(b"xy"))
    assert w.tell() == 28
    w.close()
    assert os.path.getsize(path) == 28  # close() flushed
    w.close()  # twice is fine
    w.reset()  # reopens for writing: truncates
    w.write(b"z")
    w.close()
    assert os.path.getsize(path) == 12
    with mx.recordio.MXRecordIO(path, "r") as r:
        assert r.read() == b"z"
    assert not r.is_open


def test_bad_usage(tmp_path):
    path = str(tmp_path / "u.rec")
    with pytest.raises(ValueError, match="Invalid flag"):
        mx.recordio.MXRecordIO(path, "a")
    with pytest.raises(MXNetError, match="cannot open.*nope.rec"):
        mx.recordio.MXRecordIO(str(tmp_path / "nope.rec"), "r")
    w = mx.recordio.MXRecordIO(path, "w")
    with pytest.raises(MXNetError, match="needs bytes"):
        w.write("text")
    with pytest.raises(MXNetError, match="read on a writer"):
        w.read()
    w.close()
    with pytest.raises(MXNetError, match="closed"):
        w.write(b"x")
    r = mx.recordio.MXRecordIO(path, "r")
    with pytest.raises(MXNetError, match="write on a reader"):
        r.write(b"x")
    with pytest.raises(MXNetError, match="cannot open index"):
        mx.recordio.MXIndexedRecordIO(str(tmp_path / "missing.idx"), path, "r")


def test_too_large_record_refused(tmp_path):
    w = mx.recordio.MXRecordIO(str(tmp_path / "h.rec"), "w")
    with pytest.raises(MXNetError, match="2\\^29"):
        w.write(memoryview(np.zeros(1 << 29, np.uint8)))  # calloc'd: never touched
    w.close()


# ----------------------------------------------------------------------------- hostile files

def read_all(path):
    r = mx.recordio.MXRecordIO(str(path), "r")
    out = []
    while (s := r.read()) is not None:
        out.append(s)
    r.close()
    return out


def header(cflag, length):
    return MAGIC + struct.pack("<I", (cflag << 29) | length)


@pytest.mark.parametrize("data, message", [
    (b"\0" * 8, "bad magic 0x00000000"),
    (header(0, 16), "runs past the end of the file"),
    (header(0, (1 << 29) - 1), "record length 536870911 runs past the end"),
    (MAGIC, "truncated record header"),
    (header(1, 4) + b"abcd", "ends inside a multi-part record"),
    (header(2, 4) + b"abcd", "cflag 2 out of sequence for a record's first part"),
    (header(3, 0), "cflag 3 out of sequence"),
    (header(1, 0) + header(0, 0), "cflag 0 out of sequence for a record's continuation"),
    (header(0, 1) + b"a\0\0\0" + b"junkjunk", "at byte offset 12: bad magic"),
    (header(5, 0), "cflag 5"),
], ids=["magic", "past-end", "huge-length", "short-header", "unfinished", "cflag2-first",
        "cflag3-first", "cflag0-continuation", "second-magic", "cflag5"])
def test_corrupt_files_raise(tmp_path, data, message):
    path = tmp_path / "bad.rec"
    path.write_bytes(data)
    with pytest.raises(MXNetError, match=message) as e:
        read_all(path)
    assert "bad.rec" in str(e.value) and "byte offset" in str(e.value)


def test_truncations_raise_or_end_cleanly(tmp_path, golden):
    data = (GOLDEN / "mxnet.rec").read_bytes()
    _, _, tells = write_indexed(tmp_path, golden["items"], name="ref")
    path = tmp_path / "cut.rec"
    cuts = set(random.Random(0).sample(range(len(data)), 150))
    cuts |= {t + d for t in tells for d in (-1, 0, 1, 4, 8, 9) if 0 <= t + d < len(data)}
    for cut in sorted(cuts):
        path.write_bytes(data[:cut])
        if cut in tells:
            assert len(read_all(path)) == tells.index(cut)
        else:
            with pytest.raises(MXNetError):
                read_all(path)


def test_fuzzed_files_never_escape(tmp_path):
    """Random byte changes: every read gives records or an MXNetError (no other error, no hang)."""
    data = bytearray((GOLDEN / "mxnet.rec").read_bytes())
    rng = random.Random(1234)
    path = tmp_path / "fuzz.rec"
    outcomes = set()
    for _ in range(300):
        d = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(d))
            d[pos] = rng.randrange(256) if rng.random() < 0.7 else d[pos] ^ 0xE0
        path.write_bytes(bytes(d))
        try:
            read_all(path)
            outcomes.add("ok")
        except MXNetError as e:
            assert "fuzz.rec" in str(e)
            outcomes.add("error")
    assert outcomes == {"ok", "error"}


def test_hostile_index(tmp_path, golden):
    rec = str(GOLDEN / "mxnet.rec")
    idx = tmp_path / "h.idx"
    idx.write_text("1\t0\n\n2\tnotanumber\n")
    with pytest.raises(MXNetError, match=r'h.idx" line 3'):
        mx.recordio.MXIndexedRecordIO(str(idx), rec, "r")
    idx.write_text("1\t0\t7\n")
    with pytest.raises(MXNetError, match="line 1"):
        mx.recordio.MXIndexedRecordIO(str(idx), rec, "r")
    idx.write_text("1\t0\n2\t999999\n3\t2\n")
    r = mx.recordio.MXIndexedRecordIO(str(idx), rec, "r")
    assert r.read_idx(1) == b""
    with pytest.raises(MXNetError, match="offset 999999 of key 2 is outside"):
        r.read_idx(2)
    with pytest.raises(MXNetError, match="byte offset 2: bad magic"):
        r.read_idx(3)


# ----------------------------------------------------------------------------- processes

def test_pickle_reader_reopens(golden):
    items = [s for _, s in golden["items"]]
    r = mx.recordio.MXIndexedRecordIO(str(GOLDEN / "mxnet.idx"), str(GOLDEN / "mxnet.rec"), "r")
    assert r.read() == items[0]
    r2 = pickle.loads(pickle.dumps(r))
    assert r.read() == items[1]  # the original is untouched
    assert r2.is_open and r2.keys == r.keys
    assert r2.read() == items[0]  # the copy starts over
    assert r2.read_idx(r.keys[-1]) == items[-1]
    r.close()
    r3 = pickle.loads(pickle.dumps(r))
    assert not r3.is_open


def test_pickle_writer_flushes(tmp_path):
    path = str(tmp_path / "pw.rec")
    w = mx.recordio.MXRecordIO(path, "w")
    w.write(b"abc")
    state = pickle.dumps(w)
    assert os.path.getsize(path) == 12
    w.close()
    assert pickle.loads(state).is_open  # reopened for writing, as MXNet does


def _child(conn, rec):
    try:
        try:
            rec.read()
            conn.send("read allowed")
        except MXNetError as e:
            conn.send("refused" if "multiple processes" in str(e) else repr(e))
        key = rec.keys[-1]
        conn.send(rec.read_idx(key))  # seek resets in a new process
    except BaseException as e:  # pragma: no cover - reported to the parent
        conn.send(repr(e))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_forked_worker(golden):
    r = mx.recordio.MXIndexedRecordIO(str(GOLDEN / "mxnet.idx"), str(GOLDEN / "mxnet.rec"), "r")
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_child, args=(child, r))
    p.start()
    assert parent.poll(30)
    assert parent.recv() == "refused"
    assert parent.recv() == golden["items"][-1][1]
    p.join(30)
    assert r.read() == golden["items"][0][1]  # the parent's reader is unaffected
