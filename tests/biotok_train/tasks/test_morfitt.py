"""MORFITT reader: the README counts, and bad rows named by file:line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from biotok.errors import CorpusError
from biotok_train.tasks import morfitt

README_TRAIN = {
    "veterinary": 320, "etiology": 317, "psychology": 255, "surgery": 223, "genetics": 207, "physiology": 217,
    "pharmacology": 112, "microbiology": 115, "immunology": 106, "chemistry": 94, "virology": 76, "parasitology": 68,
}


def test_morfitt_counts(shared_data: Path):
    t = morfitt.load_morfitt(shared_data / "corpora")
    assert t.sizes() == {"train": 1514, "dev": 1022, "test": 1088}
    assert [sum(len(e.labels) for e in s) for s in (t.train, t.dev, t.test)] == [2110, 1446, 1560]
    assert Counter(lab for e in t.train for lab in e.labels) == README_TRAIN
    assert len(t.labels) == 12 and t.task_type == "multilabel"


def test_morfitt_bad_rows(tmp_path):
    f = tmp_path / "m.tsv"
    f.write_text("identifier\tabstract\tspecialities\nab12\tUn résumé.\tsurgery|cardiology\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"m.tsv:2: speciality 'cardiology' not in the label set"):
        list(morfitt.read_morfitt(f))
    f.write_text("identifier\tabstract\tspecialities\nab12\tUn résumé.\t\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"m.tsv:2: no speciality"):
        list(morfitt.read_morfitt(f))
    f.write_text("identifier\tabstract\tspecialities\nab12\tUn résumé.\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"m.tsv:2: expected 3 tab-separated columns"):
        list(morfitt.read_morfitt(f))
    f.write_text('identifier\tabstract\tspecialities\nab12\tUn "résumé.\tsurgery|virology\n', encoding="utf-8")
    (ex,) = morfitt.read_morfitt(f)
    assert ex.labels == ("surgery", "virology") and ex.text == 'Un "résumé.'
