"""ablate.keys: a job's inputs are contents, never paths. A task is keyed by the bytes of the files
its reader opened (wherever they sit, whatever else lies beside them); a user's task file edited in
place reruns exactly its fine-tunes, and moved or named another way it keeps its records."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from biotok_train.ablate import run_ablation
from biotok_train.ablate.jobs import Job
from biotok_train.ablate.keys import KINDS, Key, content_keys, task_key
from biotok_train.ablate.plan import leg_names, make_plan, plan_legs
from biotok_train.ablate.config import AblationConfig, Finetuning, Pretraining, Statistics
from biotok_train.tasks import load
from tests.biotok_train.ablate import toyjobs as T
from tests.biotok_train.ablate.test_run import _fake_ablation, _bio_task

SHARED = Path(os.environ.get("BIOTOK_SHARED_DATA", Path(__file__).resolve().parents[3] / ".." / "shared" / "data"))
needs_shared = pytest.mark.skipif(not (SHARED / "corpora").is_dir(), reason=f"needs the shared data at {SHARED}")


def _one_file_task(path: Path, label: str = "ety") -> Path:
    """One BIO file (biotok splits it into train, dev and test by hash)."""
    rows = []
    for i in range(60):
        rows += [f"Le O\npatient{i} O\nprésente O\ndiabète B-{label}\n. O\n"]
    path.write_text("\n".join(rows), encoding="utf-8")
    return path


def test_a_user_task_is_keyed_by_its_bytes_not_its_path(tmp_path, monkeypatch):
    task = _one_file_task(tmp_path / "a" / "task.bio") if (tmp_path / "a").mkdir() is None else None
    key = task_key(str(task), load(str(task)))
    moved = tmp_path / "b" / "other.bio"
    moved.parent.mkdir()
    shutil.copyfile(task, moved)
    link = tmp_path / "link.bio"
    link.symlink_to(task)
    monkeypatch.chdir(tmp_path)
    for same in ("a/task.bio", str(task), str(moved), str(link)):
        assert task_key(same, load(same)) == key, same
    _one_file_task(task, label="maladie")  # edited in place
    assert task_key("a/task.bio", load("a/task.bio")) != key


@needs_shared
def test_a_registered_task_is_keyed_by_the_files_its_reader_opened(tmp_path):
    """The key of morfitt is the same from the whole shared data and from a folder holding only
    its own files (what a GPU machine receives), and a new corpus beside it changes nothing."""
    whole = task_key("morfitt", load("morfitt", SHARED / "corpora"))
    subset = tmp_path / "corpora"
    shutil.copytree(SHARED / "corpora" / "morfitt-fr", subset / "morfitt-fr")
    assert task_key("morfitt", load("morfitt", subset)) == whole
    (subset / "unrelated").mkdir()
    (subset / "unrelated" / "x.txt").write_text("nothing to do with it\n", encoding="utf-8")
    assert task_key("morfitt", load("morfitt", subset)) == whole
    assert load("morfitt", subset).sources == tuple(str(subset / "morfitt-fr" / f"{s}.tsv.gz")
                                                    for s in ("train", "dev", "test"))


def test_an_edited_task_file_reruns_its_fine_tunes_and_a_moved_one_does_not(tmp_path, sample_corpus, tiny_unigram,
                                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    task = _bio_task(tmp_path / "task")
    cfg = AblationConfig(tokenizers=(str(tiny_unigram),), corpus=(str(sample_corpus),), tasks=("task",),
                         finetuning=Finetuning(seeds=(0,)), statistics=Statistics(n_words=20, floor=False))
    name = leg_names(cfg.tokenizers)[0]
    ran = _fake_ablation(monkeypatch, cfg, {("tiny", name): lambda i, f: True}, {}, {("tiny", name): [1, 0] * 10})
    run_ablation(cfg, tmp_path / "out", progress=False)
    assert any("/file-" in r for r in ran)
    ran.clear()
    text = (task / "test.txt").read_text(encoding="utf-8")
    (task / "test.txt").write_text(text.replace("B-ety", "B-mal").replace("I-ety", "I-mal"), encoding="utf-8")
    run_ablation(cfg, tmp_path / "out", progress=False)  # the same name, edited in place
    assert [r for r in ran if "/file-" in r] and all("/file-" in r for r in ran)  # its fine-tunes only
    ran.clear()
    shutil.move(task, tmp_path / "elsewhere")
    moved = AblationConfig(**{**cfg.__dict__, "tasks": (str(tmp_path / "elsewhere"),)})
    run_ablation(moved, tmp_path / "out", progress=False)  # moved, absolute: the same contents, nothing to run
    assert ran == []


def _content_keys(cfg: AblationConfig, fp: dict) -> dict:
    legs = plan_legs(cfg, dict(zip(cfg.tokenizers, leg_names(cfg.tokenizers))))
    return content_keys(make_plan(cfg, legs, fp).jobs)


def test_a_need_planned_after_its_job_is_refused():
    with pytest.raises(ValueError, match="needs b"):
        content_keys([Job("a", T.add, ("a",), ("b",)), Job("b", T.add, ("b",))])


def test_each_input_changed_in_turn_reruns_exactly_the_jobs_that_depend_on_it():
    cfg = AblationConfig(tokenizers=("t/x", "t/y"), corpus=("c",), tasks=("e3c", "morfitt"),
                         pretraining=Pretraining(seeds=(0,)), finetuning=Finetuning(seeds=(0, 1)))
    fp = {"corpus": "C", "base": None, "tok": {"x": "TX", "y": "TY"}, "task": {"e3c": "K1", "morfitt": "K2"},
          "precision": "cpu:fp32"}
    before = _content_keys(cfg, fp)

    def stale(**change) -> set[str]:
        after = _content_keys(cfg, {**fp, **change})
        assert set(after) == set(before)
        return {k for k in before if before[k] != after[k]}

    every = set(before)
    assert stale(corpus="C2") == every  # the text: every preparation, so everything
    x = {k for k in every if k.endswith("/x") or "/x/" in k}
    assert stale(tok={"x": "TX2", "y": "TY"}) == x and x  # one vocabulary: its arm and floor only
    e3c = {k for k in every if "/e3c/" in k}
    assert stale(task={"e3c": "K1b", "morfitt": "K2"}) == e3c and e3c  # one task: its fine-tunes only
    models = {k for k in every if not k.startswith(("prepare/", "floor-model/"))}  # a random init is the CPU's
    assert stale(precision="cuda:bf16") == models  # another arithmetic: every model trained or scored in it


def test_each_setting_changed_reruns_exactly_the_jobs_it_enters():
    import dataclasses

    from biotok_train.config import FinetuneConfig

    cfg = AblationConfig(tokenizers=("t/x",), corpus=("c",), tasks=("e3c",), pretraining=Pretraining(seeds=(0,)),
                         finetuning=Finetuning(seeds=(0,)))
    fp = {"corpus": "C", "base": None, "tok": {"x": "TX"}, "task": {"e3c": "K1"}, "precision": "cpu:fp32"}
    before = _content_keys(cfg, fp)

    def stale(**change) -> set[str]:
        after = _content_keys(AblationConfig.from_flat(**{**cfg.flat(), **change}), fp)
        return {k for k in before if before[k] != after.get(k)}

    arm = {"pretrain/tiny/x/p0", "evaluate/tiny/x/p0", "finetune/tiny/x/p0/e3c/f0"}
    assert stale(budget=cfg.pretraining.budget + 1) == arm  # the pretraining and what follows it; the floor stays
    assert stale(n_words=cfg.statistics.n_words + 1) == {"evaluate/tiny/x/p0"}
    assert stale(finetune=FinetuneConfig(epochs=cfg.finetuning.recipe.epochs + 1)) == {
        "finetune/tiny/x/p0/e3c/f0", "finetune/tiny/x/floor/p0/e3c/f0"}
    assert stale(seq_len=cfg.pretraining.seq_len * 2) == set(before)  # the prepared text itself
    # an option at the default it was added with leaves every key as it was; set, it enters the fine-tunes
    assert stale(finetune=FinetuneConfig(max_eval_examples=0)) == set()
    assert stale(finetune=FinetuneConfig(max_eval_examples=40)) == {
        "finetune/tiny/x/p0/e3c/f0", "finetune/tiny/x/floor/p0/e3c/f0"}


# --- Key: a job's identity ---------------------------------------------------------------------------
def _toy_plan(**kw) -> list[str]:
    """Every job key of a plan built from made-up fingerprints (no file is read)."""
    cfg = AblationConfig.from_flat(corpus=("c.txt",), **kw)
    toks = list(cfg.tokenizers)
    legs = plan_legs(cfg, dict(zip(toks, leg_names(toks))))
    tasks = dict.fromkeys((*cfg.tasks, *cfg.curve_task_list))
    fp = {"corpus": "c", "base": "b" if cfg.base.model else None, "tok": {leg.vocab: leg.vocab for leg in legs},
          "task": {t: f"{i}" * 64 for i, t in enumerate(tasks)}, "precision": "cpu:fp32"}
    return [j.key for j in make_plan(cfg, legs, fp).jobs]


PLANS = {"scratch": dict(tokenizers=("/x/a", "/x/b"), tasks=("ner-x", "/nowhere/t.conll"), sizes=("tiny", "small"),
                         pretrain_seeds=(0, 1), seeds=(0, 2), floor=True, probe=True, curve=(2, 4), curve_tasks=("ner-x",)),
         "base": dict(tokenizers=("/x/a",), tasks=("ner-x",), base="/x/base", arms=("general", "continual", "transfer", "scratch"),
                      transfer_methods=("fvt", "random"), floor=True, curve=(3,), curve_tasks=("ner-x",))}


@pytest.mark.parametrize("plan", sorted(PLANS))
def test_every_planned_key_parses_back_to_itself(plan):
    keys = _toy_plan(**PLANS[plan])
    assert len(keys) == len(set(keys)) > 20
    kinds = set()
    for text in keys:
        key = Key.parse(text)
        assert str(key) == text and key.kind in KINDS
        kinds.add(key.kind)
    assert kinds >= {"prepare", "pretrain", "evaluate", "finetune", "curve"}


def test_a_key_names_its_fields():
    k = Key.parse("finetune/small/scratch.a/floor/p1/file-0123abcd/f2")
    assert (k.kind, k.size, k.arm, k.pseed, k.task, k.fseed, k.step) == ("finetune", "small", "scratch.a/floor", 1,
                                                                         "file-0123abcd", 2, None)
    assert k.floor and k.group == "finetune/small/scratch.a/floor"
    c = Key.parse("curve/tiny/transfer-fvt.a/k0/p0/e3c/f1")
    assert (c.arm, c.step, c.pseed, c.task, c.fseed, c.floor, c.group) == ("transfer-fvt.a", 0, 0, "e3c", 1, False,
                                                                           "curve/tiny/transfer-fvt.a/k0")
    assert Key.parse("evaluate/small/a/p3/k10").step == 10 and Key.parse("evaluate/small/a/p3").step is None
    assert (Key.parse("transfer/fvt/a").method, Key.parse("init/a/p2").pseed) == ("fvt", 2)
    assert Key.parse("finetune/s/floor.a/p0/t/f0").floor and Key.parse("probe").pseed is None
    assert str(Key("pretrain", "small", "a", pseed=0)) == "pretrain/small/a/p0"


@pytest.mark.parametrize("text", ["", "probe/x", "prepare", "prepare/", "pretrain/s/a/q1", "pretrain/s/a/p01",
                                  "pretrain/s/a/p-1", "finetune/s/p0/t/f0", "evaluate/s/a/p0/k", "curve/s/a/p0/t/f0",
                                  "warmup/s/a/p0", "finetune/s//p0/t/f0"])
def test_a_string_no_plan_makes_is_not_a_key(text):
    with pytest.raises(ValueError):
        Key.parse(text)
