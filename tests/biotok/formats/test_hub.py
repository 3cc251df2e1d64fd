"""biotok.formats.hub: aliases resolve to a local copy, the HF cache, or one clear offline error."""

from __future__ import annotations

from pathlib import Path

import pytest

from biotok.formats import hub
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
    d = hub.resolve("camemberta", tokenizers_dir=shared_data / "tokenizers")
    assert d == shared_data / "tokenizers" / "camemberta-base"


def test_env_dir(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hub.ENV_DIR, str(shared_data / "tokenizers"))
    assert hub.resolve("scibert").name == "scibert-scivocab-uncased"


def test_offline_uncached_alias_is_one_clear_line(offline_empty_cache: Path, tmp_path: Path) -> None:
    with pytest.raises(TokenizerLoadError) as e:
        hub.resolve("alibert", tokenizers_dir=tmp_path)
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


def test_download_picks_the_first_complete_file_set(offline_empty_cache: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The online path (HfApi listing + hf_hub_download), with the two Hub calls stubbed."""
    import huggingface_hub

    snap = tmp_path / "snap"
    snap.mkdir()
    fetched: list[str] = []

    def fake_download(repo_id: str, filename: str, **kw) -> str:
        assert repo_id == "dmis-lab/biobert-v1.1"
        fetched.append(filename)
        (snap / filename).write_text("x", encoding="utf-8")
        return str(snap / filename)

    monkeypatch.setattr(hub, "hub_reachable", lambda timeout=3.0: True)
    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_files",
                        lambda self, repo_id, **kw: ["config.json", "vocab.txt", "tokenizer_config.json", "pytorch_model.bin"])
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    assert hub.resolve("biobert") == snap
    assert fetched == ["vocab.txt", "tokenizer_config.json"]  # tokenizer files only, no weights


def test_download_errors_are_one_line(offline_empty_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    def boom(self, repo_id, **kw):
        raise RuntimeError("401 Client Error: gated repo\nmore details")

    monkeypatch.setattr(hub, "hub_reachable", lambda timeout=3.0: True)
    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_files", boom)
    with pytest.raises(TokenizerLoadError) as e:
        hub.resolve("drbert")
    assert "\n" not in str(e.value) and "Dr-BERT/DrBERT-7GB" in str(e.value) and "gated" in str(e.value)
