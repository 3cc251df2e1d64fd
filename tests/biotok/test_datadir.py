"""biotok.datadir: one lookup for the local data folder, one environment variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from biotok import datadir


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv(datadir.ENV, raising=False)
    monkeypatch.delenv(datadir.TOKENIZERS_ENV, raising=False)


def test_nothing_set_means_none():
    assert datadir.shared_data() is None
    assert datadir.tokenizers_dir() is None and datadir.corpora_dir() is None


def test_shared_data_names_both_folders(monkeypatch, tmp_path):
    monkeypatch.setenv(datadir.ENV, str(tmp_path))
    assert datadir.shared_data() == tmp_path
    assert datadir.tokenizers_dir() == tmp_path / "tokenizers"
    assert datadir.corpora_dir() == tmp_path / "corpora"


def test_explicit_path_wins(monkeypatch, tmp_path):
    monkeypatch.setenv(datadir.ENV, str(tmp_path))
    assert datadir.tokenizers_dir("elsewhere") == Path("elsewhere")
    assert datadir.corpora_dir(tmp_path / "c") == tmp_path / "c"


def test_older_tokenizers_variable_is_still_read(monkeypatch, tmp_path):
    (tmp_path / "shared").mkdir()  # a missing BIOTOK_SHARED_DATA folder is an error of its own (test_contract)
    monkeypatch.setenv(datadir.ENV, str(tmp_path / "shared"))
    monkeypatch.setenv(datadir.TOKENIZERS_ENV, str(tmp_path / "toks"))
    assert datadir.tokenizers_dir() == tmp_path / "toks"
    assert datadir.corpora_dir() == tmp_path / "shared" / "corpora"


def test_alias_found_through_shared_data(monkeypatch, shared_data):
    from biotok.formats import load

    monkeypatch.setenv(datadir.ENV, str(shared_data))
    assert load("camemberta").vocab_size == 32003
