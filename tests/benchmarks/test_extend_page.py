"""benchmarks/extend_page.py: every sentence of the extend-fr verdict follows the numbers of its JSON,
and the figure draws each curve from them (the published page byte for byte: test_extend_fr.py)."""

from __future__ import annotations

import copy
import json

import pytest

from benchmarks import extend_page as P
from tests.conftest import REPO

LABELS = {P.STRICT: "strict row", P.LOOSE: "loose row", "camemberta": "unigram row"}


@pytest.fixture()
def results() -> dict:
    return json.loads((REPO / "docs" / "results" / "extend-fr" / "results.json").read_text(encoding="utf-8"))


def test_cut_and_versus_say_what_the_numbers_say():
    assert P.cut(None, 1.5) == "fewer candidates" and P.cut(1.2, 1.5) == "1.200 (20.0%)"
    assert P.versus(0.151, 0.147) == "beats it by 0.4 points"
    assert P.versus(0.106, 0.147) == "trails it by 4.1 points" and P.versus(0.1, 0.1) == "ties with it"


def test_the_tables_hold_a_row_per_label_and_a_column_per_k(results):
    page = P.render(results, LABELS)
    assert "| base | as is | +500 | +1,000 | +2,000 | +5,000 | +10,000 |" in page
    assert "| strict row | 1.584 | 1.417 (10.6%) | 1.442 (9.0%) |" in page
    assert ("| strict row | 1.584 | 1.478 (6.7%) | 1.453 (8.3%) | 1.429 (9.8%) | 1.397 (11.8%) | fewer candidates |"
            in page)
    assert "| fresh biotok WordPiece (32,768 + K) | | 1.264 | 1.263 | 1.261 | 1.254 | 1.245 |" in page
    del results["fresh"]["10000"]
    assert "| base | as is | +500 | +1,000 | +2,000 | +5,000 |\n" in P.render(results, LABELS)


def test_the_verdict_follows_the_numbers(results):
    page = P.render(results, LABELS)
    assert "The issue's 20 % is not met by the default\nand not met by `--no-strict`" in page
    assert "(the curve stops at +5,000)" in page and "makes\n0 held-out lines longer." in page
    r = copy.deepcopy(results)
    r["naive"][P.LOOSE]["savings"] = 1.2  # 24.2% cut: met by --no-strict only
    r["curve"][P.STRICT]["10000"] = 1.25  # the proven curve reaches +10,000, longer than the fresh 1.245
    r["domain_wordpiece"]["longer_lines"] = 1
    page = P.render(r, LABELS)
    assert "is not met by the default\nbut met by `--no-strict`" in page
    assert "CamemBERTv2 + 10,000 (default) gives 1.250 pieces/word, a fresh WordPiece of the same size 1.245: " \
           "the extension segments longer" in page
    assert "makes\n1 held-out line longer." in page
    r["curve"][P.STRICT]["10000"] = 1.2
    assert "the extension segments shorter" in P.render(r, LABELS)


def test_the_figure_is_drawn_from_the_numbers(results, tmp_path):
    path = P.figure(results, tmp_path / P.FIGURE)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    results["fresh"] = {k: v + 0.1 for k, v in results["fresh"].items()}
    assert P.figure(results, tmp_path / "other.png").read_bytes() != path.read_bytes()
