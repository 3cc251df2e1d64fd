"""biotok.hub: aliases resolve to a local copy, the HF cache, or one clear offline error."""

from __future__ import annotations

from pathlib import Path

import pytest

from biotok import hub
from biotok.errors import TokenizerLoadError

REQUIRED = {
    "alibert": "quinten-datalab/AliBERT-7GB",
    "camembert": "almanach/camembert-base",
    "camembert-bio": "almanach/camembert-bio-base",
    "camemberta": "almanach/camemberta-base",
    "camembertv2": "almanach/camembertv2-base",
    "drbert": "Dr-BERT/DrBERT-7GB",
    "flaubert": "flaubert/flaubert_base_uncased",
    "barthez": "moussaKam/barthez",
    "bert": "google-bert/bert-base-uncased",
    "bert-cased": "google-bert/bert-base-cased",
    "scibert": "allenai/scibert_scivocab_uncased",
    "pubmedbert": "microsoft/BiomedNLP-BiomedBERT-base-uncased-abstract",
    "biobert": "dmis-lab/biobert-v1.1",
}


def test_registry_has_every_required_alias() -> None:
    assert {k: hub.REGISTRY[k].repo_id for k in REQUIRED} == REQUIRED


@pytest.fixture
def offline_empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from huggingface_hub import constants

    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(hub.ENV_DIR, raising=False)
    return cache


def test_local_copy_from_tokenizers_dir(shared_data: Path) -> None:
    d = hub.resolve("camemberta", tokenizers_dir_=shared_data / "tokenizers")
    assert d == shared_data / "tokenizers" / "camemberta-base"


def test_env_dir(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hub.ENV_DIR, str(shared_data / "tokenizers"))
    assert hub.resolve("scibert").name == "scibert-scivocab-uncased"


def test_offline_uncached_alias_is_one_clear_line(offline_empty_cache: Path, tmp_path: Path) -> None:
    with pytest.raises(TokenizerLoadError) as e:
        hub.resolve("alibert", tokenizers_dir_=tmp_path)
    msg = str(e.value)
    assert "\n" not in msg
    assert "'alibert'" in msg and "quinten-datalab/AliBERT-7GB" in msg
    assert "--tokenizers-dir" in msg and hub.ENV_DIR in msg and "offline" in msg


def test_offline_is_detected_without_waiting(offline_empty_cache: Path) -> None:
    assert hub.hub_reachable() is False


def test_cached_download_is_used_offline(offline_empty_cache: Path) -> None:
    # the Hugging Face cache layout that hf_hub_download leaves behind
    repo = offline_empty_cache / "models--almanach--camemberta-base"
    snap = repo / "snapshots" / "0123456789abcdef"
    snap.mkdir(parents=True)
    (snap / "tokenizer.json").write_text("{}", encoding="utf-8")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123456789abcdef", encoding="utf-8")
    assert hub.resolve("camemberta") == snap


def test_unknown_alias() -> None:
    with pytest.raises(TokenizerLoadError, match="known alias"):
        hub.resolve("not-a-model")


def test_local_copy_needs_tokenizer_files(tmp_path: Path) -> None:
    (tmp_path / "camemberta-base").mkdir()
    (tmp_path / "camemberta-base" / "README.md").write_text("no tokenizer here")
    assert hub.local_copy(hub.REGISTRY["camemberta"], tmp_path) is None
    (tmp_path / "camemberta-base" / "spm.model").write_bytes(b"x")
    assert hub.local_copy(hub.REGISTRY["camemberta"], tmp_path) == tmp_path / "camemberta-base"
