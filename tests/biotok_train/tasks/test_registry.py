"""The task registry: every spec consistent, suites as documented, unknown names one error,
and scoring through a spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from biotok.errors import DataError
from biotok_train.tasks import registry as tasks
from biotok_train.tasks.examples import TASK_TYPES, MultiLabelExample, TaskData
from biotok_train.scores import METRICS


def test_every_spec_is_consistent():
    for name, spec in tasks.TASKS.items():
        assert spec.name == name
        assert spec.task_type in TASK_TYPES and spec.metric in METRICS
        assert spec.family in tasks.FAMILIES
        if spec.task_type in ("classify", "relation", "yesno-qa", "multilabel"):
            assert len(spec.labels) >= 2, name


def test_suites():
    blurb = [t.name for t in tasks.suite_tasks("blurb")]
    assert blurb == [
        "bc5-chem", "bc5-disease", "ncbi-disease", "bc2gm", "jnlpba", "chemprot", "ddi", "gad", "biosses", "hoc",
        "pubmedqa",
    ]
    assert {t.family for t in tasks.suite_tasks("blurb")} == {"ner", "relation", "similarity", "classification", "qa"}
    fr = [t.name for t in tasks.suite_tasks("fr")]
    assert fr == ["quaero-emea-drb", "quaero-medline-drb", "e3c", "mantra-fr", "morfitt", "frenchmedmcqa-nbr",
                  "frenchmedmcqa"]
    assert tasks.get_task("quaero-emea").nested == "outermost" and tasks.get_task("quaero-emea-drb").nested == "drbenchmark"
    with pytest.raises(DataError, match="unknown suite 'de'"):
        tasks.suite_tasks("de")


def test_unknown_and_unavailable_tasks():
    with pytest.raises(DataError, match=r"unknown task 'chemprott' \(one of bc5-chem"):
        tasks.get_task("chemprott")
    with pytest.raises(DataError, match="task 'ebm-pico' is not available: BLURB PICO"):
        tasks.get_task("ebm-pico")


def test_plain_spec_and_register(monkeypatch):
    data = TaskData("mine", "multilabel", ("a", "b"), (), (), ())
    spec = tasks.plain_spec(data)
    assert (spec.metric, spec.family, dict(spec.metric_options)) == ("weighted_f1_multilabel", "classification",
                                                                     {"labels": ("a", "b")})
    loaded = tasks.load(spec)
    assert loaded == data and loaded.spec is spec
    monkeypatch.setattr(tasks, "TASKS", dict(tasks.TASKS))
    tasks.register(spec)
    assert tasks.get_task("mine") is spec and tasks.load("mine").spec is spec


def test_one_door_for_files_and_bio_paths(tmp_path):
    """load() reads a user's three files with a task type (spec: the type's default metric) or a BIO
    path (no spec; fine-tuning scores it like any user's NER data); a wrong call is one clear error."""
    from biotok_train.finetune import resolve

    rows = "text\tlabel\n" + "".join(f"t{i}\t{'ab'[i % 2]}\n" for i in range(6))
    files = []
    for split in ("train", "dev", "test"):
        files.append(tmp_path / "mine" / f"{split}.tsv")
        files[-1].parent.mkdir(exist_ok=True)
        files[-1].write_text(rows, encoding="utf-8")
    data = tasks.load(files, task_type="classify")
    assert (data.name, data.task_type, data.labels, len(data.test)) == ("mine", "classify", ("a", "b"), 6)
    assert data.spec is not None and data.spec.metric == "accuracy" and resolve(data)[0] is data.spec
    with pytest.raises(DataError, match="need a task type"):
        tasks.load(files)
    with pytest.raises(DataError, match="expected train, dev and test files, got 2"):
        tasks.load(files[:2], task_type="classify")
    bio = tmp_path / "one.bio"
    bio.write_text("".join(f"mot{i} O\nfièvre B-ety\n\n" for i in range(50)), encoding="utf-8")
    with pytest.raises(DataError, match="read as BIO"):
        tasks.load(bio, task_type="classify")
    ner = tasks.load(bio)
    assert (ner.name, ner.task_type, ner.labels, ner.spec) == ("one", "ner", ("ety",), None)
    spec, same, kind = resolve(str(bio))
    assert (spec.metric, kind, same) == ("entity_f1", "ner", ner)
    with pytest.raises(DataError, match="unknown task 'chemprott'"):
        tasks.load("chemprott")
    with pytest.raises(DataError, match="is a relation task, not ner"):
        tasks.load("chemprot", task_type="ner")


def test_spec_validation():
    with pytest.raises(DataError, match="unknown metric 'f3'"):
        tasks.TaskSpec("x", None, "classify", "f3", lambda c, k: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(DataError, match="unknown task type 'seq2seq'"):
        tasks.TaskSpec("x", None, "seq2seq", "accuracy", lambda c, k: None)  # type: ignore[arg-type,return-value]


def test_targets_and_hoc_scoring_by_abstract():
    spec = tasks.get_task("hoc")
    labs = spec.labels
    rows = (
        MultiLabelExample("1_s0", "a", (labs[0],), group="1"),
        MultiLabelExample("1_s1", "b", (labs[1],), group="1"),
        MultiLabelExample("2_s0", "c", (), group="2"),
    )
    assert tasks.targets("multilabel", rows) == [(labs[0],), (labs[1],), ()]
    # the labels are swapped between the sentences of abstract 1: right at abstract level
    s = spec.score_examples(rows, [(labs[1],), (labs[0],), ()])
    assert s.metric == "hoc_f1" and s.n == 2 and s.details["micro_f1"] == 1.0


def test_chemprot_scoring_ignores_false():
    spec = tasks.get_task("chemprot")
    assert spec.metric == "positive_micro_f1"
    s = spec.score(["false", "CPR:3", "CPR:4"], ["false", "CPR:3", "false"])
    assert s.value == pytest.approx(2 / 3)  # P = 1, R = 1/2


def test_loading_through_specs(shared_data: Path):
    corpora = shared_data / "corpora"
    t = tasks.load("frenchmedmcqa", corpora)
    assert isinstance(t, TaskData) and t.sizes() == {"train": 2171, "dev": 312, "test": 622}
    assert all(1 <= len(e.answers) <= 5 and len(e.options) == 5 for e in t.train)
    gold = tasks.targets("mcq", t.test)
    assert tasks.get_task("frenchmedmcqa").score(gold, gold).details["exact_match_ratio"] == 1.0
    nbr = tasks.load("frenchmedmcqa-nbr", corpora)
    assert [e.label for e in nbr.test] == [str(len(e.answers)) for e in t.test]
    e3c = tasks.load("e3c", corpora)
    assert e3c.task_type == "ner" and len(e3c.train) + len(e3c.dev) == 504 and len(e3c.test) == 605
    assert tasks.load("biosses", corpora).sizes() == {"train": 64, "dev": 16, "test": 20}
