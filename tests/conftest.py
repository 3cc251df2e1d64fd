"""Shared fixtures: the reference data beside the checkout, the sample corpus, tiny tokenizers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "corpora" / "sample" / "e3c_pamj_fr.txt"
_SHARED_CANDIDATES = [
    os.environ.get("BIOTOK_SHARED_DATA", ""),
    str(REPO.parent / "shared" / "data"),
]


def pytest_collection_modifyitems(config, items):
    """Slow tests (minutes to hours, run with -m slow) have no time limit: pyproject's timeout is
    for the default run, where a test that hangs must fail instead of stalling CI."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(0))


def _shared() -> Path | None:
    for c in _SHARED_CANDIDATES:
        if c and (Path(c) / "MANIFEST.md").is_file():
            return Path(c)
    return None


SHARED = _shared()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (reference tokenizers and corpora); tests skip when it is absent."""
    if SHARED is None:
        pytest.skip("../shared/data is absent beside the checkout (set BIOTOK_SHARED_DATA)")
    return SHARED


@pytest.fixture(scope="session")
def sample_corpus() -> Path:
    return SAMPLE


@pytest.fixture(scope="session")
def sample_lines() -> list[str]:
    return [l for l in SAMPLE.read_text(encoding="utf-8").splitlines() if l.strip()]


@pytest.fixture(scope="session")
def tiny_unigram(tmp_path_factory) -> Path:
    """A biotok Unigram (lowercased, 2,000 pieces) trained once on the sample corpus."""
    from biotok.config import NormalizeConfig, TrainConfig
    from biotok.train import train_tokenizer

    out = tmp_path_factory.mktemp("tok") / "unigram-lower"
    cfg = TrainConfig(algo="unigram", vocab_size=2000, normalize=NormalizeConfig(lowercase=True))
    train_tokenizer([SAMPLE], cfg, out)
    return out


@pytest.fixture(scope="session")
def tiny_wordpiece(tmp_path_factory) -> Path:
    """A biotok WordPiece (cased, 2,000 pieces) trained once on the sample corpus."""
    from biotok.config import TrainConfig
    from biotok.train import train_tokenizer

    out = tmp_path_factory.mktemp("tok") / "wordpiece"
    train_tokenizer([SAMPLE], TrainConfig(algo="wordpiece", vocab_size=2000), out)
    return out
