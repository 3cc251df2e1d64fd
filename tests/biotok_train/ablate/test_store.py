"""biotok_train/ablate/store.py: a piece's records carried between machines as one archive."""

from __future__ import annotations

import io
import json
import tarfile

import pytest

from biotok.errors import ConfigError
from biotok_train.ablate import keys
from biotok_train.ablate.store import export_records, import_records, read_pieces, recorded_precision


@pytest.fixture
def piece_out(tmp_path, monkeypatch):
    """An OUT after a piece ran: records and costs under jobs/, a started marker, a model."""
    monkeypatch.setattr(keys, "precision_key", lambda: "cuda:bf16")
    out = tmp_path / "gpu"
    for key in ("pretrain/small/A/p0", "finetune/small/A/p0/e3c/f0"):
        (out / "jobs" / key).parent.mkdir(parents=True, exist_ok=True)
        (out / "jobs" / f"{key}.json").write_text(json.dumps({"key": key, "inputs": "abc", "result": 1}), encoding="utf-8")
        (out / "jobs" / f"{key}.cost.json").write_text('{"wall_s": 1.0}', encoding="utf-8")
        (out / "jobs" / f"{key}.started").write_text("abc\n", encoding="utf-8")
    (out / "arms" / "small" / "A" / "p0" / "model").mkdir(parents=True)
    (out / "arms" / "small" / "A" / "p0" / "model" / "model.safetensors").write_bytes(b"\0" * 1000)
    return out


def test_records_travel_and_merge(piece_out, tmp_path):
    archive = tmp_path / "piece-1.tar.xz"
    manifest = export_records(piece_out, archive, {"piece": "A/p0", "device": "NVIDIA H100"})
    assert manifest == {"piece": "A/p0", "device": "NVIDIA H100", "precision": "cuda:bf16", "records": 2}
    with tarfile.open(archive) as tar:
        names = sorted(tar.getnames())
    assert names == ["jobs/finetune/small/A/p0/e3c/f0.cost.json", "jobs/finetune/small/A/p0/e3c/f0.json",
                     "jobs/pretrain/small/A/p0.cost.json", "jobs/pretrain/small/A/p0.json", "piece.json"]
    again = tmp_path / "again.tar.xz"  # the same records, the same bytes
    export_records(piece_out, again, {"piece": "A/p0", "device": "NVIDIA H100"})
    assert again.read_bytes() == archive.read_bytes()

    home = tmp_path / "home"
    assert import_records(archive, home) == manifest
    for name in names[:-1]:
        assert (home / name).read_bytes() == (piece_out / name).read_bytes()
    assert not (home / "arms").exists() and not list(home.rglob("*.started"))
    import_records(archive, home)  # merged twice: one manifest
    assert read_pieces(home) == [manifest] and recorded_precision(home) == "cuda:bf16"


def _tar(path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:xz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("case, reason", [
    ("missing", "not found"), ("text", "not an archive of ablation records"),
    ("escape", "it holds jobs/../../evil.json"), ("no manifest", "not an archive of ablation records"),
    ("no precision", "its piece.json names no precision"), ("model", "it holds arms/model.safetensors")])
def test_a_bad_archive_is_one_error_and_writes_nothing(tmp_path, case, reason):
    path = tmp_path / "piece.tar.xz"
    good = {"piece.json": b'{"precision": "cuda:bf16"}', "jobs/a.json": b"{}"}
    if case == "text":
        path.write_text("not a tar", encoding="utf-8")
    elif case == "escape":
        _tar(path, {**good, "jobs/../../evil.json": b"{}"})
    elif case == "no manifest":
        _tar(path, {"jobs/a.json": b"{}"})
    elif case == "no precision":
        _tar(path, {**good, "piece.json": b"{}"})
    elif case == "model":
        _tar(path, {**good, "arms/model.safetensors": b"\0"})
    with pytest.raises(ConfigError, match="not an archive of ablation records") as e:
        import_records(path, tmp_path / "home")
    assert reason in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "home").exists() and not (tmp_path / "evil.json").exists()


def test_pieces_of_two_arithmetics_make_no_report(tmp_path):
    home = tmp_path / "home"
    for i, precision in enumerate(("cuda:bf16", "cuda:fp32")):
        manifest = {"precision": precision, "piece": i, "records": 0}
        _tar(tmp_path / f"p{i}.tar.xz", {"piece.json": json.dumps(manifest).encode()})
        import_records(tmp_path / f"p{i}.tar.xz", home)
    assert recorded_precision(tmp_path / "empty") is None
    with pytest.raises(ConfigError, match="made in cuda:bf16 and cuda:fp32: one report needs one arithmetic"):
        recorded_precision(home)


def test_a_packed_file_comes_back_only_whole(tmp_path):
    from biotok_train.ablate.store import pack_file, unpack_file

    src = tmp_path / "text.txt"
    src.write_text("une ligne\n" * 1000, encoding="utf-8")
    sha = pack_file(src, tmp_path / "text.txt.xz")
    assert (tmp_path / "text.txt.xz").stat().st_size < src.stat().st_size
    unpack_file(tmp_path / "text.txt.xz", tmp_path / "back.txt", sha)
    assert (tmp_path / "back.txt").read_bytes() == src.read_bytes()
    with pytest.raises(ConfigError, match="does not give the file that was packed"):
        unpack_file(tmp_path / "text.txt.xz", tmp_path / "wrong.txt", "0" * 64)
    assert not (tmp_path / "wrong.txt").exists()
