"""benchmarks/keyed.py: a keyed folder is made once per inputs (a stopped run leaves nothing), and a
tokenizer once per folder, fitted to what its text supports when asked."""

from __future__ import annotations

import json

import pytest

from benchmarks import keyed as K
from biotok.config import TrainConfig
from biotok.errors import ConfigError


def test_cache_keys_follow_the_inputs():
    a = K.cache_key({"recipe": 2, "leaflets_mb": 120, "sources": {"x": "ab"}})
    assert a == K.cache_key({"sources": {"x": "ab"}, "leaflets_mb": 120, "recipe": 2})  # order-free
    assert a != K.cache_key({"recipe": 2, "leaflets_mb": 40, "sources": {"x": "ab"}})
    assert a != K.cache_key({"recipe": 2, "leaflets_mb": 120, "sources": {"x": "cd"}})
    assert a != K.cache_key({"recipe": 2, "leaflets_mb": 120.0, "sources": {"x": "ab"}})  # as JSON writes it
    assert len(a) == 16


def test_keyed_texts_are_written_once_per_inputs(tmp_path):
    made = []
    texts = {"train": lambda: made.append("train") or iter(["a b", "c"]), "held": lambda: ["d"]}
    paths = K.keyed_texts(tmp_path, {"n": 1}, texts)
    assert paths["train"].read_text(encoding="utf-8") == "a b\nc\n"
    assert paths["held"].read_text(encoding="utf-8") == "d\n"
    assert paths["train"].parent == tmp_path / K.cache_key({"n": 1})
    assert json.loads((paths["train"].parent / K.INPUTS).read_text(encoding="utf-8")) == {"n": 1}
    assert K.keyed_texts(tmp_path, {"n": 1}, texts) == paths and made == ["train"]  # kept: not made again
    assert K.keyed_texts(tmp_path, {"n": 2}, texts)["train"].parent != paths["train"].parent and len(made) == 2


def test_a_keyed_folder_stopped_midway_leaves_nothing(tmp_path):
    def broken(tmp):
        (tmp / "half.txt").write_text("x", encoding="utf-8")
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError):
        K.keyed_folder(tmp_path, {"n": 1}, broken)
    assert list(tmp_path.iterdir()) == []


def test_trained_once_and_fitted_to_what_the_text_supports(tmp_path, sample_corpus):
    cfg = TrainConfig(algo="wordpiece", vocab_size=500)
    out = K.trained([sample_corpus], cfg, tmp_path / "wp", workers=1)
    stamp = (out / "tokenizer.json").stat().st_mtime_ns
    assert K.trained([sample_corpus], cfg, out, workers=1) == out
    assert (out / "tokenizer.json").stat().st_mtime_ns == stamp  # kept: not trained again
    big = TrainConfig(algo="wordpiece", vocab_size=100_000)  # the sample supports 21,195 WordPiece pieces
    with pytest.raises(ConfigError, match="supports only 21195"):
        K.trained([sample_corpus], big, tmp_path / "big", workers=1)
    fitted = K.trained([sample_corpus], big, tmp_path / "big", fit=True, workers=1)
    assert json.loads((fitted / "biotok.json").read_text(encoding="utf-8"))["config"]["vocab_size"] == 21000


def test_trained_each_keys_each_config_on_its_own(tmp_path, sample_corpus):
    configs = {"a": TrainConfig(algo="wordpiece", vocab_size=400), "b": TrainConfig(algo="wordpiece", vocab_size=450)}
    got = K.trained_each(tmp_path, [sample_corpus], configs, {"corpus": "k1"})
    assert set(got) == {"a", "b"} and got["a"].name.startswith("a-") and got["a"].name != got["b"].name
    assert K.trained_each(tmp_path, [sample_corpus], configs, {"corpus": "k2"})["a"] != got["a"]


def test_extended_once_per_config_and_none_when_the_text_offers_fewer(tmp_path, tiny_wordpiece, sample_lines, capsys):
    from biotok.extension import ExtendConfig

    (text := tmp_path / "text.txt").write_text("\n".join(sample_lines[:300]) + "\n", encoding="utf-8")
    out = K.extended(tiny_wordpiece, [text], ExtendConfig(add=20), tmp_path / "ext")
    meta = json.loads((out / "biotok.json").read_text(encoding="utf-8"))
    assert out == tmp_path / "ext" and meta["added"] == 20 and meta["config"]["extend"]["strict"]
    stamp = (out / "tokenizer.json").stat().st_mtime_ns
    assert K.extended(tiny_wordpiece, [text], ExtendConfig(add=20), out) == out
    assert (out / "tokenizer.json").stat().st_mtime_ns == stamp  # kept: not extended again
    K.extended(tiny_wordpiece, [text], ExtendConfig(add=20, strict=False), out)  # another config: made again
    assert not json.loads((out / "biotok.json").read_text(encoding="utf-8"))["config"]["extend"]["strict"]
    capsys.readouterr()
    assert K.extended(tiny_wordpiece, [text], ExtendConfig(add=1_000_000), tmp_path / "big") is None
    assert "more than the" in capsys.readouterr().err and not (tmp_path / "big").exists()
