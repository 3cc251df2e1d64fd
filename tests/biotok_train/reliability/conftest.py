"""Tiny inputs shared by the fifth reliability battery's tests (issue 46): a corpus, a WordPiece
of 300 pieces, its prepared data (sequences of 32), built once per session."""

from __future__ import annotations

import pytest
from click.testing import CliRunner


@pytest.fixture(scope="session")
def rel_base(tmp_path_factory, sample_lines):
    from biotok.cli import main as biotok_main

    base = tmp_path_factory.mktemp("reliability")
    (base / "c.txt").write_text("\n".join(sample_lines[:40]) + "\n", encoding="utf-8")
    (base / "h.txt").write_text("\n".join(sample_lines[-8:]) + "\n", encoding="utf-8")
    r = CliRunner().invoke(biotok_main, ["train", str(base / "c.txt"), "--algo", "wordpiece", "--vocab-size", "300",
                                         "--out", str(base / "tok"), "-q"])
    assert r.exit_code == 0, r.output
    return base


@pytest.fixture(scope="session")
def rel_data(rel_base):
    from biotok_train.cli import main

    r = CliRunner().invoke(main, ["prepare", str(rel_base / "c.txt"), "-t", str(rel_base / "tok"), "--seq-len", "32",
                                  "--out", str(rel_base / "data"), "--no-progress"], prog_name="biotok-train")
    assert r.exit_code == 0, r.output
    return rel_base / "data"
