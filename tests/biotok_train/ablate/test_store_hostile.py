"""biotok_train/ablate/store.py under hostile archives: an archive is data from another machine.

Each case was merged (or written through, or believed) before: links, '..' and absolute paths,
devices and FIFOs, a compression bomb, a manifest that lies, records that are not JSON or not
their own, conflicting records, a damaged xz. Now each is one error line and OUT stays as it was.
"""

from __future__ import annotations

import io
import json
import lzma
import tarfile
import tracemalloc

import pytest

from biotok.errors import ConfigError
from biotok_train.ablate import store as R
from tests._contract import tree_digest

PRECISION = "cuda:bf16"


def record(key: str, inputs: str = "abc", result=1) -> bytes:
    return json.dumps({"key": key, "inputs": inputs, "result": result}).encode()


def manifest(n: int, **extra) -> bytes:
    return json.dumps({"piece": "A/p0", "precision": PRECISION, "records": n, **extra}).encode()


def info(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tuple:
    i = tarfile.TarInfo(name)
    i.type, i.linkname, i.size = kind, linkname, len(data) if kind == tarfile.REGTYPE else 0
    return i, data


def make(path, *members, mode: str = "w:xz"):
    """An archive of ``members`` (TarInfo, data) pairs, in that order."""
    with tarfile.open(path, mode) as tar:
        for i, data in members:
            tar.addfile(i, io.BytesIO(data) if i.type == tarfile.REGTYPE else None)
    return path


def good(path, keys=("pretrain/small/A/p0", "finetune/small/A/p0/e3c/f0"), **kw):
    members = [info("piece.json", manifest(len(keys)))]
    for k in keys:
        members += [info(f"jobs/{k}.json", record(k, **kw)), info(f"jobs/{k}.cost.json", b'{"wall_s": 1.0}')]
    return make(path, *members)


@pytest.fixture
def home(tmp_path):
    """An OUT holding one finished record already (made there) and nothing else."""
    out = tmp_path / "home"
    (out / "jobs" / "prepare").mkdir(parents=True)
    (out / "jobs" / "prepare" / "A.json").write_bytes(record("prepare/A"))
    return out


def refused(archive, out, *fragments, select=None) -> str:
    """import_records refuses ``archive`` in one line holding ``fragments``, and OUT is unchanged."""
    before = tree_digest(out)
    with pytest.raises(ConfigError) as e:
        R.import_records(archive, out, select=select)
    line = str(e.value)
    assert "\n" not in line and "Traceback" not in line and "LZMA" not in line
    for f in fragments:
        assert f in line, line
    assert tree_digest(out) == before
    return line


# --- members that are not plain files under jobs/ --------------------------------------------------
@pytest.mark.parametrize("member, why", [
    (info("jobs/x.json", kind=tarfile.SYMTYPE, linkname="/etc/passwd"), "jobs/x.json"),
    (info("jobs/x.json", kind=tarfile.SYMTYPE, linkname="../../victim.json"), "jobs/x.json"),
    (info("jobs/x.json", kind=tarfile.LNKTYPE, linkname="jobs/pretrain/small/A/p0.json"), "a hard link"),
    (info("jobs/x.json", kind=tarfile.LNKTYPE, linkname="/etc/passwd"), "jobs/x.json"),
    (info("jobs/x.json", kind=tarfile.CHRTYPE), "jobs/x.json"),
    (info("jobs/x.json", kind=tarfile.BLKTYPE), "jobs/x.json"),
    (info("jobs/x.json", kind=tarfile.FIFOTYPE), "jobs/x.json"),
    (info("jobs/sub", kind=tarfile.DIRTYPE), "a folder"),
    (info("jobs/../../evil.json", record("x")), "jobs/../../evil.json"),
    (info("jobs/a/../../../evil.json", record("x")), "evil.json"),
    (info("/tmp/evil.json", record("x")), "/tmp/evil.json"),
    (info("/jobs/x.json", record("x")), "/jobs/x.json"),
    (info("./jobs/x.json", record("x")), "./jobs/x.json"),
    (info("jobs//x.json", record("x")), "jobs//x.json"),
    (info("jobs/x.sh", b"rm -rf ~"), "jobs/x.sh"),
    (info("arms/small/A/p0/model/model.safetensors", b"\0" * 10), "model.safetensors"),
])
def test_only_plain_files_under_jobs_are_read(tmp_path, home, member, why):
    keys = ("pretrain/small/A/p0",)
    path = make(tmp_path / "piece.tar.xz", info("piece.json", manifest(1)),
                info(f"jobs/{keys[0]}.json", record(keys[0])), member)
    line = refused(path, home, "is not an archive of ablation records", "it holds", why)
    assert not (tmp_path / "evil.json").exists() and not (tmp_path / "victim.json").exists()
    assert "pretrain" not in {p.name for p in (home / "jobs").iterdir()}, line  # the good record was not merged


def test_the_data_filter_is_applied_where_python_has_it():
    """tarfile's 'data' filter (Python >= 3.11.4; the GPU image has 3.12) refuses what it refuses,
    beside our own checks."""
    if not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python has no tarfile.data_filter")
    i, _ = info("jobs/x.json", kind=tarfile.CHRTYPE)
    assert "special file" in R._unsafe(i)
    i, _ = info("jobs/../../x.json", b"{}")
    assert "outside the destination" in R._unsafe(i)


# --- bombs -----------------------------------------------------------------------------------------
def _xz_concat(*parts: bytes) -> bytes:
    return b"".join(parts)


def _zeros_stream(n: int) -> bytes:
    return lzma.compress(b"\0" * n, preset=0)


def test_a_compression_bomb_is_refused_while_read_without_holding_it(tmp_path, home):
    """A ~60 kB archive whose one member expands to 400 MB: refused at its header, nothing written,
    and the memory taken stays far below the member (tracemalloc, not a clock)."""
    header = info("jobs/x.json", b"")[0]
    header.size = 400_000_000
    four_mib = _zeros_stream(4 << 20)
    bomb = _xz_concat(lzma.compress(header.tobuf(tarfile.PAX_FORMAT), preset=0), *[four_mib] * 96)
    path = tmp_path / "bomb.tar.xz"
    path.write_bytes(bomb)
    assert path.stat().st_size < 100_000
    tracemalloc.start()
    try:
        refused(path, home, "jobs/x.json", "400,000,000 bytes", "16 MiB")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, peak


def test_a_bomb_of_many_small_members_stops_at_the_expanded_bound(tmp_path, home):
    """Members each under the per-member bound but together past the archive's: refused by the
    bounded reader once it has read that much, never later."""
    one_mib = _zeros_stream(1 << 20)
    parts = [lzma.compress(info("piece.json", manifest(0))[0].tobuf() + manifest(0).ljust(512, b"\0"), preset=0)]
    for n in range(6):  # 6 x 15 MiB of zeros: 90 MiB
        h = info(f"jobs/b{n}.cost.json")[0]
        h.size = 15 << 20
        parts += [lzma.compress(h.tobuf(), preset=0)] + [one_mib] * 15
    path = tmp_path / "many.tar.xz"
    path.write_bytes(b"".join(parts))
    assert path.stat().st_size < 200_000
    refused(path, home, "expands past 64 MiB", "compression bomb")


def test_a_huge_extended_header_is_refused_by_the_bound(tmp_path, home):
    """tarfile reads a pax header whole into memory: a 400 MB one stops at the expanded bound."""
    h = tarfile.TarInfo("././@PaxHeader")
    h.type, h.size = tarfile.XHDTYPE, 400_000_000
    path = tmp_path / "pax.tar.xz"
    path.write_bytes(lzma.compress(h.tobuf(tarfile.USTAR_FORMAT), preset=0) + _zeros_stream(4 << 20) * 96)
    tracemalloc.start()
    try:
        refused(path, home, "is not an archive of ablation records")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 << 20, peak


# --- manifests and records that lie ----------------------------------------------------------------
@pytest.mark.parametrize("n, said", [(5, "says 5 records, it holds 2"), (0, "says 0 records"), ("2", "says '2'"),
                                     (True, "says True"), (None, "says None")])
def test_a_manifest_that_lies_about_its_records_is_refused(tmp_path, home, n, said):
    keys = ("a/p0", "b/p0")
    path = make(tmp_path / "p.tar.xz", info("piece.json", json.dumps({"precision": PRECISION, "records": n}).encode()),
                *[info(f"jobs/{k}.json", record(k)) for k in keys])
    refused(path, home, said)


@pytest.mark.parametrize("name, data, said", [
    ("jobs/a/p0.json", b'{"key": "a/p0", "inputs": "x", "result": ', "jobs/a/p0.json is not valid JSON"),
    ("jobs/a/p0.json", b"\xff\xfe not utf-8", "jobs/a/p0.json is not valid JSON"),
    ("jobs/a/p0.json", b"[1, 2]", "not the record of job a/p0"),
    ("jobs/a/p0.json", record("b/p0"), "not the record of job a/p0 (its key is b/p0)"),
    ("jobs/a/p0.json", b'{"key": "a/p0"}', "no inputs or result"),
])
def test_a_record_that_is_not_its_own_is_refused(tmp_path, home, name, data, said):
    path = make(tmp_path / "p.tar.xz", info("piece.json", manifest(1)), info(name, data))
    refused(path, home, said)


@pytest.mark.parametrize("data", [b"{not json", b"[]"])
def test_a_cost_that_is_not_json_is_refused(tmp_path, home, data):
    path = make(tmp_path / "p.tar.xz", info("piece.json", manifest(1)), info("jobs/a/p0.json", record("a/p0")),
                info("jobs/a/p0.cost.json", data))
    refused(path, home, "jobs/a/p0.cost.json")


def test_a_manifest_claiming_the_bookkeeping_key_is_refused(tmp_path, home):
    path = make(tmp_path / "p.tar.xz", info("piece.json", manifest(0, merged={"archive": "x", "sha256": {}})))
    refused(path, home, "merged")


# --- damaged archives ------------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "flipped", "folder", "fifo"])
def test_a_damaged_archive_is_one_line(tmp_path, home, damage):
    import os

    path = good(tmp_path / "p.tar.xz")
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(os.urandom(4000))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "flipped":
        path.write_bytes(data[:200] + bytes([data[200] ^ 0xFF]) + data[201:])
    elif damage == "folder":
        path.unlink()
        path.mkdir()
    else:
        path.unlink()
        os.mkfifo(path)  # never opened: reading it would wait for a writer forever
    refused(path, home, str(path), "is not an archive of ablation records")


def test_a_damaged_packed_file_is_one_line(tmp_path):
    src = tmp_path / "text.txt"
    src.write_text("une ligne\n" * 5000, encoding="utf-8")
    sha = R.pack_file(src, tmp_path / "text.txt.xz")
    packed = (tmp_path / "text.txt.xz").read_bytes()
    for name, data in (("truncated", packed[: len(packed) // 2]), ("garbage", b"not xz at all")):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ConfigError, match="is damaged") as e:
            R.unpack_file(tmp_path / name, tmp_path / "back.txt", sha)
        assert "\n" not in str(e.value) and "pack it again" in str(e.value)
        assert not (tmp_path / "back.txt").exists()
        assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".back.txt")]
    with pytest.raises(ConfigError, match="cannot read"):
        R.unpack_file(tmp_path / "absent.xz", tmp_path / "back.txt", sha)
    with pytest.raises(ConfigError, match="cannot read"):
        R.pack_file(tmp_path / "absent.txt", tmp_path / "absent.txt.xz")


# --- merging: never a silent replacement, and idempotent --------------------------------------------
def test_conflicting_records_from_two_archives_are_refused_naming_both(tmp_path, home):
    a = good(tmp_path / "piece-a.tar.xz")
    b = good(tmp_path / "piece-b.tar.xz", result=2)  # the same keys, other results
    R.import_records(a, home)
    line = refused(b, home, "piece-b.tar.xz and piece-a.tar.xz hold different records of job")
    assert json.loads((home / "jobs" / "pretrain/small/A/p0.json").read_text())["result"] == 1


def test_another_recipes_record_does_not_replace_one_made_at_home(tmp_path, home):
    path = make(tmp_path / "p.tar.xz", info("piece.json", manifest(1)),
                info("jobs/prepare/A.json", record("prepare/A", inputs="other")))
    refused(path, home, "p.tar.xz and", str(home / "jobs" / "prepare" / "A.json"), "made there")


def test_a_damaged_record_at_home_is_replaced_and_an_equal_one_kept(tmp_path, home):
    (home / "jobs" / "prepare" / "A.json").write_text('{"key": "prepa', encoding="utf-8")
    path = make(tmp_path / "p.tar.xz", info("piece.json", manifest(2)),
                info("jobs/prepare/A.json", record("prepare/A")), info("jobs/x/p0.json", record("x/p0")))
    R.import_records(path, home)
    assert (home / "jobs" / "prepare" / "A.json").read_bytes() == record("prepare/A")
    assert (home / "jobs" / "x" / "p0.json").read_bytes() == record("x/p0")


def test_the_same_archive_merged_twice_changes_nothing(tmp_path, home):
    a = good(tmp_path / "piece-a.tar.xz")
    b = good(tmp_path / "piece-b.tar.xz", keys=("pretrain/small/B/p0",))
    same = good(tmp_path / "piece-c.tar.xz")  # piece-a's records, under another name
    R.import_records(a, home)
    R.import_records(b, home)
    once = tree_digest(home)
    pieces = (home / R.PIECES).read_bytes()
    for again in (a, b, a):
        R.import_records(again, home)
        assert tree_digest(home) == once and (home / R.PIECES).read_bytes() == pieces
    R.import_records(same, home)  # equal records from another archive: fine, and said in pieces.json
    entries = json.loads((home / R.PIECES).read_text())
    assert [e["merged"]["archive"] for e in entries] == ["piece-a.tar.xz", "piece-b.tar.xz", "piece-c.tar.xz"]
    assert R.read_pieces(home) == [json.loads(manifest(2)), json.loads(manifest(1))]
    sha = R._sha(record("pretrain/small/A/p0"))
    assert entries[0]["merged"]["sha256"]["pretrain/small/A/p0"] == sha


def test_select_merges_only_the_keys_it_accepts_but_checks_the_whole_archive(tmp_path, home):
    keys = ("pretrain/small/A/p0", "finetune/small/A/p0/e3c/f0", "finetune/small/A/p0/e3c/f1")
    a = good(tmp_path / "piece-a.tar.xz", keys=keys)
    R.import_records(a, home, select=lambda k: k.startswith("pretrain/"))
    got = sorted(p.relative_to(home / "jobs").as_posix() for p in (home / "jobs").rglob("*.json"))
    assert got == ["prepare/A.json", "pretrain/small/A/p0.cost.json", "pretrain/small/A/p0.json"]
    assert list(json.loads((home / R.PIECES).read_text())[0]["merged"]["sha256"]) == ["pretrain/small/A/p0"]
    R.import_records(a, home, select=lambda k: k.endswith("/f0"))  # later, more of the same archive
    assert (home / "jobs" / "finetune/small/A/p0/e3c/f0.json").is_file()
    assert not (home / "jobs" / "finetune/small/A/p0/e3c/f1.json").exists()
    assert len(json.loads((home / R.PIECES).read_text())) == 1  # one entry for one archive, now listing both
    bad = make(tmp_path / "bad.tar.xz", info("piece.json", manifest(2)), info("jobs/a/p0.json", record("a/p0")),
               info("jobs/b/p0.json", b"not json"))
    refused(bad, home, "jobs/b/p0.json is not valid JSON", select=lambda k: k == "a/p0")


def test_a_plain_or_gzip_tar_is_read_the_same(tmp_path, home):
    for mode in ("w", "w:gz", "w:bz2"):
        path = make(tmp_path / f"p-{mode[-2:]}.tar", info("piece.json", manifest(1)),
                    info("jobs/z/p0.json", record("z/p0")), mode=mode)
        assert R.import_records(path, home)["records"] == 1
    assert (home / "jobs" / "z" / "p0.json").read_bytes() == record("z/p0")


def test_export_sends_only_what_import_takes(tmp_path, monkeypatch):
    """A damaged record, a symlink or a stray cost on the GPU machine made an archive that home
    would refuse whole (a slot's work lost): export leaves them out, and home takes the rest."""
    from biotok_train.ablate import keys

    monkeypatch.setattr(keys, "precision_key", lambda: PRECISION)
    gpu = tmp_path / "gpu" / "jobs"
    (gpu / "a").mkdir(parents=True)
    (gpu / "a" / "p0.json").write_bytes(record("a/p0"))
    (gpu / "a" / "p0.cost.json").write_text('{"wall_s": 1}')
    (gpu / "a" / "p1.json").write_text('{"key": "a/p1", "inp')  # killed mid-write by an older writer
    (gpu / "a" / "p1.cost.json").write_text('{"wall_s": 1}')
    (gpu / "a" / "p2.json").symlink_to(gpu / "a" / "p0.json")
    (gpu / "a" / "p3.json").write_bytes(record("a/other"))
    m = R.export_records(tmp_path / "gpu", tmp_path / "p.tar.xz", {"piece": "a"})
    assert m["records"] == 1
    with tarfile.open(tmp_path / "p.tar.xz") as tar:
        assert sorted(tar.getnames()) == ["jobs/a/p0.cost.json", "jobs/a/p0.json", "piece.json"]
    assert R.import_records(tmp_path / "p.tar.xz", tmp_path / "home") == m


@pytest.mark.parametrize("name", ["jobs/a\nb.json", "jobs/a\udcff.json", "jobs/" + "x" * 300 + ".json"])
def test_a_strange_member_name_is_refused_on_one_line(tmp_path, home, name):
    path = make(tmp_path / "p.tar", info("piece.json", manifest(0)), info(name, record("x")), mode="w")
    refused(path, home, "it holds")


def test_a_damaged_gzip_archive_is_one_line(tmp_path, home):
    path = make(tmp_path / "p.tar.gz", info("piece.json", manifest(1)), info("jobs/a/p0.json", record("a/p0") * 200),
                mode="w:gz")
    data = path.read_bytes()
    path.write_bytes(data[:30] + bytes(b ^ 0x5A for b in data[30:60]) + data[60:])
    refused(path, home, "is not an archive of ablation records")


def test_an_oversized_member_is_refused_on_every_path_before_anything_is_written(tmp_path, home, monkeypatch):
    """The store's one bounded reader: a merge (and the slot planner's reading of an archive) and the slot estimate."""
    from biotok_train.ablate import estimate

    monkeypatch.setattr(R, "MAX_MEMBER", 200)
    big = make(tmp_path / "big.tar.xz", info("piece.json", manifest(1)),
               info("jobs/pretrain/small/A/p0.json", record("pretrain/small/A/p0", inputs="x" * 300)))
    before = tree_digest(home)
    for read in (R.read_archive, lambda a: estimate.slot_costs([a]),
                 lambda a: R.import_records(a, home)):
        with pytest.raises(ConfigError, match="over the 0 MiB a record may take"):
            read(big)
    assert tree_digest(home) == before
