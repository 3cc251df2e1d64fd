"""ablate.jobs: the job functions of an ablation, each of plain arguments (an engine may ship it to
another process), each reading what it needs from OUT and returning what its record keeps."""

from __future__ import annotations

import pickle
from pathlib import Path

from biotok_train.ablate import jobs as J
from biotok_train.ablate.config import AblationConfig, Base, Pretraining, Statistics
from biotok_train.ablate.run import split_corpus
from biotok_train.ablate.store import Layout, data_dir
from tests.biotok_train.ablate.test_run import _bio_task


def _env(tmp_path, corpus, tok, task) -> J.Env:
    cfg = AblationConfig(tokenizers=(str(tok),), corpus=(str(corpus),), tasks=(str(task),),
                         pretraining=Pretraining(seq_len=32), statistics=Statistics(n_words=5, heldout_every=50))
    out = tmp_path / "out"
    split_corpus(cfg, out)
    return J.Env(cfg, str(out))


def test_a_job_and_its_env_travel_as_a_pickle(tmp_path, sample_corpus, tiny_unigram):
    env = _env(tmp_path, sample_corpus, tiny_unigram, _bio_task(tmp_path / "t"))
    job = J.Job("prepare/v", J.prepare, (env, "v", str(tiny_unigram)), inputs="abc")
    back = pickle.loads(pickle.dumps(job))
    assert back == job and back.run is J.prepare  # a module-level function, by reference


def test_prepare_writes_both_splits_and_reports_its_segmentation(tmp_path, sample_corpus, tiny_unigram):
    env = _env(tmp_path, sample_corpus, tiny_unigram, _bio_task(tmp_path / "t"))
    result = J.prepare(env, "v", str(tiny_unigram), needs={})
    out = Path(env.out)
    assert (data_dir(out, "v") / "meta.json").is_file() and (data_dir(out, "v", heldout=True) / "meta.json").is_file()
    assert set(result) == {"vocab_size", "num_tokens", "fertility", "pieces_per_line"}
    assert result["num_tokens"] > 0 and result["fertility"] >= 1.0
    assert Path(Layout(out).corpus("pretrain.txt")).is_file()
    again = J.prepare(env, "v", str(tiny_unigram), needs={})  # the preparation already there is read back
    assert again == result


def test_preparations_share_this_machines_cores(monkeypatch):
    cfg = AblationConfig(tokenizers=("a", "b", "a"), corpus=())
    monkeypatch.setattr(J.os, "cpu_count", lambda: 16)
    assert J.prepare_workers(cfg) == 8  # two distinct vocabularies
    based = AblationConfig(tokenizers=("a", "b", "c"), corpus=(), arms=("continual", "transfer"), base=Base("m"))
    assert J.prepare_workers(based) == 4  # three and the base's own
    monkeypatch.setattr(J.os, "cpu_count", lambda: None)
    assert J.prepare_workers(cfg) == 1


def test_a_finetune_record_fits_only_the_task_data_it_was_made_of():
    fits = J.finetune.fits
    assert fits("e3c", "m", 0, "r", "k1", {"task": "k1"})
    assert not fits("e3c", "m", 0, "r", "k2", {"task": "k1"})
    assert fits("e3c", "m", 0, "r", None, {"task": "k1"})  # no key to check it against
    assert fits("e3c", "m", 0, "r", "k1", {"score": 0.5})  # older record of a registered task: kept
    assert not fits("/my/task", "m", 0, "r", "k1", {"score": 0.5})  # of a user's files: made again
    assert not fits("e3c", "m", 0, "r", "k1", None)
