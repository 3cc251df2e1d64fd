"""benchmarks/experiments/extend_fr.py: its configuration, and --from-json rewrites the published page
docs/results/extend-fr/README.md from its results.json alone, byte for byte (the verdicts:
tests/benchmarks/test_extend_page.py; the measures: test_extend_measure.py)."""

from __future__ import annotations

import pytest

from benchmarks import recipe as R
from tests.conftest import REPO

PUBLISHED = REPO / "docs" / "results" / "extend-fr"


@pytest.fixture(scope="module")
def recipe():
    from benchmarks.experiments import extend_fr

    return extend_fr


def test_each_arm_extends_its_base_in_its_own_folder_and_mode(recipe, monkeypatch):
    monkeypatch.setattr(recipe.K, "extended", lambda base, texts, cfg, folder: (base, texts, cfg, folder))
    corpus = recipe.WORK / "sample_train.txt"
    got = {m: recipe.extension(m, corpus, 2000) for m in recipe.BASES}
    assert list(recipe.LABEL) == list(recipe.BASES)  # a row of the page for each base
    assert {m: (c.add, c.by, c.strict) for m, (_, _, c, _) in got.items()} == {
        recipe.STRICT: (2000, "savings", True), recipe.LOOSE: (2000, "savings", False),
        "camemberta": (2000, "savings", True)}
    assert {m: f.name for m, (_, _, _, f) in got.items()} == {  # the names of the cache the page was made from
        recipe.STRICT: "camembertv2-sample_train-savings-2000",
        recipe.LOOSE: "camembertv2-sample_train-savings-loose-2000",
        "camemberta": "camemberta-sample_train-savings-2000"}
    assert got[recipe.STRICT][0] == got[recipe.LOOSE][0] and got[recipe.STRICT][1] == [corpus]
    assert recipe.extension("camemberta", corpus, 500, "frequency")[3].name == "camemberta-sample_train-frequency-500"


def test_from_json_rewrites_the_published_page_byte_identical(recipe, tmp_path):
    assert R.page_main(recipe.PAGE, ["--from-json", str(PUBLISHED / "results.json"), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "README.md").read_bytes() == (PUBLISHED / "README.md").read_bytes()
    assert not (tmp_path / "results.json").exists()  # the JSON is the input, left where it is


def test_from_json_missing_is_one_line_and_exit_2(recipe, tmp_path, capsys):
    code = R.page_main(recipe.PAGE, ["--from-json", str(tmp_path / "none.json"), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "none.json not found" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "README.md").exists()
