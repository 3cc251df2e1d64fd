"""The contract of ``biotok-train ablate`` under changed inputs, damaged caches, a second run and
a full disk (issue 33, points 3, 4, 6 and 'also found'). Each case fails on the code before the
job graph: resume trusted paths, read its caches unchecked and let two runs share one OUT.

The jobs' functions are replaced by fakes (tests.biotok_train.ablate.test_run._fake_ablation) that
record what they ran: the driver, the engine, the content keys, the records and the report are
the real ones.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from biotok.output import run_lock
from biotok_train.cli import main
from tests._contract import Mounts
from tests.biotok_train.ablate.test_run import _bio_task, _fake_ablation, leg_names

PROG = "biotok-train"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name=PROG)


@pytest.fixture()
def setup(tmp_path, sample_lines, tiny_wordpiece, tiny_unigram, monkeypatch):
    """Inputs of our own (so that a case may change them): two tokenizers, a 60-line corpus, a
    task; the fakes installed; returns (args of the command, its parts, the list of jobs run)."""
    from biotok_train.ablate.config import AblationConfig, Finetuning, Statistics

    toks = [tmp_path / "toks" / "a" / "wordpiece", tmp_path / "toks" / "b" / "unigram"]
    for src, dst in zip((tiny_wordpiece, tiny_unigram), toks):
        shutil.copytree(src, dst)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(sample_lines[:60]) + "\n", encoding="utf-8")
    task = _bio_task(tmp_path / "task", n_test=10)
    cfg = AblationConfig(tokenizers=tuple(map(str, toks)), corpus=(str(corpus),), tasks=(str(task),),
                         finetuning=Finetuning(seeds=(0,)),
                         statistics=Statistics(n_words=10, n_resamples=100, heldout_every=10))
    names = leg_names(cfg.tokenizers)
    ran = _fake_ablation(monkeypatch, cfg, {("tiny", n): (lambda i, f: i % 2 == 0) for n in names},
                         {("tiny", n): (lambda i, f: False) for n in names}, {("tiny", n): [1, 0] * 5 for n in names})
    out = tmp_path / "out"
    args = ["ablate", "--tokenizers", *toks, "--corpus", corpus, "--task", task, "--seeds", 0, "--n-words", 10,
            "--n-resamples", 100, "--heldout-every", 10, "--out", out, "-q"]
    return {"args": args, "toks": toks, "corpus": corpus, "task": task, "out": out, "ran": ran}


def _finished(s) -> bytes:
    r = run(*s["args"])
    assert r.exit_code == 0, r.output
    s["ran"].clear()
    return (s["out"] / "ablation.json").read_bytes()


def test_a_grown_corpus_makes_a_new_split_and_reruns_what_depends_on_it(setup, sample_lines):
    """Before: exit 0 and the report built on the old 60-line split."""
    _finished(setup)
    setup["corpus"].write_text("\n".join(sample_lines[:120]) + "\n", encoding="utf-8")
    r = run(*setup["args"])
    assert r.exit_code == 0, r.output
    held = (setup["out"] / "corpus" / "heldout.txt").read_text(encoding="utf-8").splitlines()
    assert len(held) == 12  # each 10th of 120 lines
    assert {"wordpiece", "unigram"} <= set(setup["ran"])  # both vocabularies prepared again, and all after


def test_a_tokenizer_retrained_in_place_reruns_its_arm_only(setup, sample_corpus):
    """Before: exit 0 and the old arm reported."""
    from biotok.config import TrainConfig
    from biotok.train import train_tokenizer

    _finished(setup)
    train_tokenizer([sample_corpus], TrainConfig(algo="wordpiece", vocab_size=300), setup["toks"][0], force=True)
    r = run(*setup["args"])
    assert r.exit_code == 0, r.output
    assert "wordpiece" in setup["ran"] and "unigram" not in setup["ran"]
    assert any("/wordpiece/" in k for k in setup["ran"]) and not any("/unigram/" in k for k in setup["ran"])


def test_an_edited_task_reruns_its_fine_tunings_only(setup):
    """Before: a traceback, or stale predictions when the test split kept its size."""
    _finished(setup)
    test = setup["task"] / "test.txt"
    test.write_text(test.read_text(encoding="utf-8").replace("fièvre", "toux"), encoding="utf-8")
    r = run(*setup["args"])
    assert r.exit_code == 0, r.output
    assert setup["ran"] and all(k.startswith("arms/") and "/f0" in k for k in setup["ran"])  # fine-tunings only


def test_a_machine_with_other_arithmetic_reruns_the_models_only(setup, monkeypatch):
    """A finished ablation resumed where bf16 units are missing (or present): its pretrainings and
    fine-tunings computed other numbers there, so they rerun; the corpus split and data stay."""
    from biotok_train.ablate import keys

    monkeypatch.setattr(keys, "precision_key", lambda: "cpu:bf16")
    _finished(setup)
    monkeypatch.setattr(keys, "precision_key", lambda: "cpu:fp32")
    r = run(*setup["args"])
    assert r.exit_code == 0, r.output
    assert "wordpiece" not in setup["ran"] and "unigram" not in setup["ran"]  # the prepared data is reused
    assert any(k.startswith("arms/") and k.endswith("/model") for k in setup["ran"])  # pretrainings rerun
    assert any("/f0" in k and "floor" not in k for k in setup["ran"])  # and the fine-tunings


def test_a_moved_tokenizer_with_the_same_content_is_the_same_arm(setup, tmp_path):
    """Before: the moved tokenizer became a new arm beside the old one."""
    _finished(setup)
    moved = tmp_path / "elsewhere" / "wordpiece"
    shutil.move(str(setup["toks"][0]), moved)
    args = [str(moved) if a == setup["toks"][0] else a for a in setup["args"]]
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert setup["ran"] == []  # nothing ran again
    data = json.loads((setup["out"] / "ablation.json").read_text(encoding="utf-8"))
    assert [a["name"] for a in data["arms"]] == ["wordpiece", "unigram"]


def test_a_second_ablate_into_the_same_out_is_refused(setup):
    """Before: both ran, read each other's half-written files and crashed with tracebacks."""
    with run_lock(setup["out"], "ablate"):  # another ablate is running there
        r = run(*setup["args"])
    assert r.exit_code == 2 and "in use by another ablate run" in r.output and "Traceback" not in r.output
    assert setup["ran"] == [] and not (setup["out"] / "config.json").exists()


@pytest.mark.parametrize("what", ["record", "config"])
def test_a_damaged_cache_is_recomputed_or_refused_in_one_line(setup, what):
    """Before: a traceback (JSONDecodeError) on the rerun."""
    first = _finished(setup)
    out = setup["out"]
    if what == "record":  # a fine-tuning run's record (what predictions.json was)
        rec = next((out / "jobs" / "finetune").rglob("f0.json"))
        rec.write_text('{"key": "fine', encoding="utf-8")
        r = run(*setup["args"])
        assert r.exit_code == 0, r.output
        assert len(setup["ran"]) == 1 and (out / "ablation.json").read_bytes() == first
    else:
        (out / "config.json").write_text("[]", encoding="utf-8")
        r = run(*setup["args"])
        assert r.exit_code == 2 and "config.json is damaged" in r.output and "--force" in r.output
        assert r.output.count("\n") == 1 and "Traceback" not in r.output
        r = run(*setup["args"], "--force")  # what the message advises
        assert r.exit_code == 0, r.output
        assert setup["ran"] == [] and (out / "ablation.json").read_bytes() == first  # nothing else was redone


def test_another_recipe_needs_force_which_reruns_what_changed(setup):
    """Before: --force was advised by a message but ablate had no such option."""
    _finished(setup)
    args = [*setup["args"], "--ft-epochs", 2]
    r = run(*args)
    assert r.exit_code == 2 and "another recipe" in r.output and "--force" in r.output
    r = run(*args, "--force")
    assert r.exit_code == 0, r.output
    # the fine-tuning recipe changed: the fine-tunings ran again, the preparations, pretrainings and
    # evaluations were kept
    assert len(setup["ran"]) == 4 and all(k.endswith("/f0") for k in setup["ran"])


def test_a_changed_probe_reruns_the_probe_only(setup, monkeypatch):
    """Before: a changed --probe on a finished ablation advised --force, which ablate lacked."""
    from biotok_train.ablate import jobs

    def probe(env, vocabs, needs):
        setup["ran"].append(f"probe {env.cfg.probe}")
        return {v: {"bits_per_char": {"mean": 1.0 + i, "std": None, "n": 1, "values": [1.0 + i]},
                    "unigram_floor": 4.0, "versus_floor": {"difference": -1.0, "low": -1.1, "high": -0.9},
                    "versus_reference": None} for i, v in enumerate(vocabs)}

    monkeypatch.setattr(jobs, "probe", probe)
    _finished(setup)
    for steps in (25, 50):
        r = run(*setup["args"], "--probe", steps)
        assert r.exit_code == 0, r.output
        assert setup["ran"] == [f"probe {steps}"]
        setup["ran"].clear()


def test_a_task_with_an_empty_split_is_refused_before_any_job(setup):
    """Before: refused only after every arm was pretrained, leaving OUT behind."""
    (setup["task"] / "dev.txt").write_text("", encoding="utf-8")
    r = run(*setup["args"])
    assert r.exit_code == 2 and "dev split is empty" in r.output and "Traceback" not in r.output
    assert setup["ran"] == [] and not setup["out"].exists()


def test_a_failed_job_is_one_line_and_the_report_waits(setup, monkeypatch):
    """A job that fails (an ordinary error) is one line naming it; the others are done, no report
    yet, exit 2; the rerun resumes. (A full disk stops at once: test_disk_errors.py.)"""
    from biotok_train.ablate import jobs

    real = jobs.evaluate

    def broken(env, vocab, rel_model, needs):
        if "unigram" in rel_model:
            raise OSError("the held-out words are unreadable")
        return real(env, vocab, rel_model, needs)

    monkeypatch.setattr(jobs, "evaluate", broken)
    r = run(*setup["args"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "evaluate/tiny/unigram/p0: the held-out words are unreadable" in r.output
    assert f"(writing {setup['out'] / 'jobs' / 'evaluate' / 'tiny' / 'unigram' / 'p0.json'})" in r.output
    assert not (setup["out"] / "ablation.json").exists()
    assert "arms/tiny/wordpiece/p0/file-" in " ".join(setup["ran"])  # the others went on
    monkeypatch.setattr(jobs, "evaluate", real)
    setup["ran"].clear()
    r = run(*setup["args"])
    assert r.exit_code == 0, r.output
    assert setup["ran"] == ["arms/tiny/unigram/p0/model"]  # the failed job only (its dependents had no record)


def test_ablate_on_a_full_disk_names_the_file(setup, tmp_path):
    """Before: the error named no file."""
    mounts = Mounts(tmp_path / "mounts")
    try:
        full = mounts.full("full")
        args = [*setup["args"][:-3], "--out", full / "out", "-q"]
        r = run(*args)
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        assert str(full / "out") in r.output and "space" in r.output
    finally:
        mounts.close()
