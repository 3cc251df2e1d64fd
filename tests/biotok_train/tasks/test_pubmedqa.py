"""PubMedQA: BLURB's split rebuilt (test = the ground truth, fold 0 = 450 / 50), bad items."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from biotok.errors import CorpusError
from biotok_train.tasks import pubmedqa


def test_pubmedqa_blurb_split(shared_data: Path):
    t = pubmedqa.load_pubmedqa(shared_data / "corpora")
    assert t.sizes() == {"train": 450, "dev": 50, "test": 500}
    assert Counter(e.label for e in t.dev) == {"yes": 27, "no": 17, "maybe": 6}
    assert Counter(e.label for e in t.test) == {"yes": 276, "no": 169, "maybe": 55}
    ids = [e.id for s in (t.train, t.dev, t.test) for e in s]
    assert len(set(ids)) == 1000
    assert t.test[0].id == "12377809"  # the ground truth's order
    assert t.labels == ("yes", "no", "maybe") and t.task_type == "yesno-qa"
    assert all(e.context and e.question for e in t.dev)


def _labels(n_yes: int, n_no: int, n_maybe: int) -> dict[str, str]:
    out = {}
    for lab, n in (("yes", n_yes), ("no", n_no), ("maybe", n_maybe)):
        for i in range(n):
            out[f"{lab}{i}"] = lab
    return out


def test_pqal_split_shape_and_determinism():
    labels = _labels(552, 338, 110)  # PQA-L's label counts
    train, dev, test = pubmedqa.pqal_split(labels)
    assert (len(train), len(dev), len(test)) == (450, 50, 500)
    assert Counter(labels[p] for p in test) == {"yes": 276, "no": 169, "maybe": 55}
    assert Counter(labels[p] for p in dev) == {"yes": 27, "no": 17, "maybe": 6}
    assert not (set(train) & set(dev)) and not ((set(train) | set(dev)) & set(test))
    assert pubmedqa.pqal_split(labels) == (train, dev, test)
    other = pubmedqa.pqal_split(labels, fold=3)
    assert other[2] == test and set(other[1]) != set(dev)


def _write(path: Path, obj) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(obj, f)
    return path


def test_read_pqal_bad_items(tmp_path):
    f = _write(tmp_path / "ori.json.gz", {"1": {"QUESTION": "q?", "CONTEXTS": ["c"], "final_decision": "perhaps"}})
    with pytest.raises(CorpusError, match=r"ori.json.gz#1: final_decision 'perhaps' not in the label set"):
        pubmedqa.read_pqal(f)
    f = _write(tmp_path / "ori2.json.gz", {"7": {"QUESTION": "q?", "final_decision": "yes"}})
    with pytest.raises(CorpusError, match=r"#7: item needs QUESTION, CONTEXTS"):
        pubmedqa.read_pqal(f)
    (tmp_path / "bad.json").write_text('{"1": ', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad.json:1: invalid JSON"):
        pubmedqa.read_pqal(tmp_path / "bad.json")


def test_mismatched_ground_truth_is_reported(tmp_path):
    labels = _labels(552, 338, 110)
    ori = {p: {"QUESTION": "q?", "CONTEXTS": ["c"], "final_decision": lab} for p, lab in labels.items()}
    folder = tmp_path / "pubmedqa"
    folder.mkdir()
    _write(folder / "ori_pqal.json.gz", ori)
    _, _, test = pubmedqa.pqal_split(labels)
    truth = {p: labels[p] for p in test}
    _write(folder / "test_ground_truth.json.gz", truth)
    t = pubmedqa.load_pubmedqa(tmp_path)
    assert [e.id for e in t.test] == list(truth)
    wrong = dict(truth)
    wrong.pop(test[0])
    wrong[next(p for p in labels if p not in truth)] = "yes"
    _write(folder / "test_ground_truth.json.gz", wrong)
    with pytest.raises(CorpusError, match="rebuilt test split differs from the ground truth in 2 PMIDs"):
        pubmedqa.load_pubmedqa(tmp_path)
