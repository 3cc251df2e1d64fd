"""User data for --task-type: every documented format read, every bad row named by file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biotok.errors import CorpusError
from biotok_train.tasks import plain
from biotok_train.tasks.examples import MCQExample, PairExample, RelationExample


def tsv(path: Path, header: str, *rows: str) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def jsonl(path: Path, *objs) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def three(tmp_path: Path, make, *rows_per_split) -> list[Path]:
    return [make(tmp_path / name, *rows) for name, rows in zip(("train", "dev", "test"), rows_per_split)]


def test_classify_tsv_and_label_set(tmp_path):
    h = "id\ttext\tlabel"
    tr, dv, te = (
        tsv(tmp_path / "train.tsv", h, "a\tgood drug\tpos", "b\tbad drug\tneg"),
        tsv(tmp_path / "dev.tsv", h, "c\tfine\tpos"),
        tsv(tmp_path / "test.tsv", h, "d\tawful\tneg"),
    )
    t = plain.load_plain("classify", tr, dv, te)
    assert t.labels == ("neg", "pos") and t.sizes() == {"train": 2, "dev": 1, "test": 1}
    assert t.train[0].id == "a" and t.train[0].source.endswith("train.tsv:2")
    bad = tsv(tmp_path / "dev2.tsv", h, "c\tfine\tneutral")
    with pytest.raises(CorpusError, match=r"dev2.tsv:2: label 'neutral' not in the label set \(neg, pos\)"):
        plain.load_plain("classify", tr, bad, te)
    with pytest.raises(CorpusError, match=r"train.tsv:3: label 'neg' not in the label set \(pos\)"):
        plain.load_plain("classify", tr, dv, te, labels=["pos"])


def test_wrong_column_count_and_missing_column(tmp_path):
    f = tsv(tmp_path / "x.tsv", "text\tlabel", "one\tpos", "two\tpos\textra")
    with pytest.raises(CorpusError, match=r"x.tsv:3: expected 2 tab-separated columns \(as the header\), got 3"):
        list(plain.read_plain("classify", f))
    f = tsv(tmp_path / "y.tsv", "sentence\tlabel", "one\tpos")
    with pytest.raises(CorpusError, match=r"y.tsv:1: the header lacks column\(s\) text"):
        list(plain.read_plain("classify", f))


def test_empty_split(tmp_path):
    tr = tsv(tmp_path / "train.tsv", "text\tlabel", "a\tx", "b\ty")
    empty = tsv(tmp_path / "dev.tsv", "text\tlabel")
    with pytest.raises(CorpusError, match=r"dev.tsv: no examples \(an empty split\)"):
        plain.load_plain("classify", tr, empty, tr)


def test_multilabel_tsv_and_jsonl(tmp_path):
    f = tsv(tmp_path / "m.tsv", "text\tlabels", "a\tx|y", "b\t")
    assert [e.labels for e in plain.read_plain("multilabel", f)] == [("x", "y"), ()]
    g = jsonl(tmp_path / "m.jsonl", {"text": "a", "labels": ["x"], "group": "doc1"})
    (ex,) = plain.read_plain("multilabel", g)
    assert ex.labels == ("x",) and ex.group == "doc1" and ex.source.endswith("m.jsonl:1")


def test_pair_regression(tmp_path):
    f = tsv(tmp_path / "p.tsv", "text_a\ttext_b\tscore", "a\tb\t3.5")
    assert list(plain.read_plain("pair-regression", f)) == [PairExample("0", "a", "b", 3.5, f"{f}:2")]
    f = tsv(tmp_path / "q.tsv", "text_a\ttext_b\tscore", "a\tb\thigh")
    with pytest.raises(CorpusError, match=r"q.tsv:2: score 'high' is not a number"):
        list(plain.read_plain("pair-regression", f))


def test_relation_needs_both_entities(tmp_path):
    f = tsv(
        tmp_path / "r.tsv", "text\tlabel",
        "@GENE$ is linked to @DISEASE$\t1", "[E1] BRCA1 [/E1] and [E2] cancer [/E2]\t0", "the @CHEM-GENE$ complex\t0",
        "@GENE$ alone\t1",
    )
    with pytest.raises(CorpusError, match=r"r.tsv:5: a relation text needs both entities"):
        list(plain.read_plain("relation", f))
    ok = list(plain.read_plain("relation", tsv(tmp_path / "s.tsv", "text\tlabel", "@GENE$ and @DISEASE$\t1")))
    assert ok == [RelationExample("0", "@GENE$ and @DISEASE$", "1", f"{tmp_path / 's.tsv'}:2")]


def test_yesno_qa_jsonl_errors(tmp_path):
    f = jsonl(tmp_path / "q.jsonl", {"question": "q?", "context": "c", "label": "yes"}, {"question": "q?", "label": "no"})
    with pytest.raises(CorpusError, match=r"q.jsonl:2: missing key\(s\) context"):
        list(plain.read_plain("yesno-qa", f))
    f.write_text('{"question": "q?"\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"q.jsonl:1: invalid JSON"):
        list(plain.read_plain("yesno-qa", f))
    f = jsonl(tmp_path / "e.jsonl", {"question": "", "context": "c", "label": "yes"})
    with pytest.raises(CorpusError, match=r"e.jsonl:1: question must be a non-empty string"):
        list(plain.read_plain("yesno-qa", f))


def test_mcq_tsv_and_jsonl(tmp_path):
    f = tsv(tmp_path / "m.tsv", "question\toptions\tanswers", "Q?\tA|B|C\tc|A")
    assert list(plain.read_plain("mcq", f)) == [MCQExample("0", "Q?", ("A", "B", "C"), (0, 2), f"{f}:2")]
    g = jsonl(tmp_path / "m.jsonl", {"question": "Q?", "options": ["A", "B"], "answers": ["c"]})
    with pytest.raises(CorpusError, match=r"m.jsonl:1: answer 'c' is not one of the option letters a..b"):
        list(plain.read_plain("mcq", g))
    g = jsonl(tmp_path / "n.jsonl", {"question": "Q?", "options": ["A"], "answers": ["a"]})
    with pytest.raises(CorpusError, match=r"n.jsonl:1: a multiple-choice question needs at least 2 options"):
        list(plain.read_plain("mcq", g))


def test_ner_conll_and_entity_types(tmp_path):
    tr = tsv(tmp_path / "train.conll", "Aspirin B-CHEM", "helps O", "", "EGFR B-GENE")
    dv = tsv(tmp_path / "dev.conll", "x O", "", "Ibuprofen B-CHEM")
    te = tsv(tmp_path / "test.conll", "cancer B-DIS")
    with pytest.raises(CorpusError, match=r"test.conll:1: entity type 'DIS' not in the label set \(CHEM, GENE\)"):
        plain.load_plain("ner", tr, dv, te)
    t = plain.load_plain("ner", tr, dv, dv)
    assert t.labels == ("CHEM", "GENE") and len(t.train) == 2
    bad = tsv(tmp_path / "bad.conll", "x O", "y I-CHEM")
    with pytest.raises(CorpusError, match=r"bad.conll:2: tag I-CHEM follows O"):
        list(plain.read_plain("ner", bad))


def test_unknown_task_type(tmp_path):
    with pytest.raises(CorpusError, match="unknown task type 'regression'"):
        list(plain.read_plain("regression", tmp_path / "x.tsv"))
