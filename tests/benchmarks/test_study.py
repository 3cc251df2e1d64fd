"""benchmarks/experiments/study.py: the variants' configs, the texts it writes, and --from-json
rewrites docs/study.md from docs/study/study.json alone (the verdicts: tests/biotok/report/test_study.py;
the cache keys: tests/benchmarks/test_keyed.py)."""

from __future__ import annotations

import pytest

from benchmarks import keyed as K, recipe as R
from tests.conftest import REPO


@pytest.fixture(scope="module")
def study():
    from benchmarks.experiments import study

    return study


def test_each_variant_is_cached_on_its_own(study):
    assert study.VARIANTS["Unigram_L"].vocab_size == 32000 and study.VARIANTS["Unigram_L"].normalize.lowercase
    assert not study.VARIANTS["Unigram_L-plain"].punct_pieces and study.VARIANTS["Unigram"].punct_pieces
    keys = {n: K.cache_key(c.to_dict()) for n, c in study.VARIANTS.items()}
    assert len(set(keys.values())) == len(keys)


def test_from_json_rewrites_study_md_byte_identical(study, tmp_path):
    out = tmp_path / "docs"  # not there yet: made
    source = REPO / "docs" / "study" / "study.json"
    assert R.page_main(study.PAGE, ["--from-json", str(source), "--docs", str(out)]) == 0
    assert (out / "study.md").read_bytes() == (REPO / "docs" / "study.md").read_bytes()
    assert not (out / "study" / "study.json").exists()  # only the page: the JSON is the input


def test_from_json_missing_is_one_line_and_exit_2(study, tmp_path, capsys):
    code = R.page_main(study.PAGE, ["--from-json", str(tmp_path / "none.json"), "--docs", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "none.json not found" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "study.md").exists()
