"""ablate.tasks: an ablation's tasks resolved in one place (the driver's check, a job's process,
the analysis): each split checked, the test data cut to what the fine-tunes score."""

from __future__ import annotations

import pytest

from biotok.errors import ConfigError
from biotok_train.ablate.config import AblationConfig, Finetuning
from biotok_train.ablate.tasks import resolve_tasks, task_data
from biotok_train.config import FinetuneConfig
from tests.biotok_train.ablate.test_run import _bio_task


def _cfg(task, **finetune) -> AblationConfig:
    return AblationConfig(tokenizers=("x",), corpus=(), tasks=(str(task),),
                          finetuning=Finetuning(FinetuneConfig(**finetune)))


def test_each_task_resolves_to_its_spec_data_type_and_head(tmp_path):
    task = _bio_task(tmp_path / "t", n_test=6)
    (r,) = resolve_tasks(_cfg(task)).values()
    assert r.kind == "ner" and len(r.data.split("train")) == 12 and len(r.data.split("test")) == 6
    assert r.head.metric == "entity_f1"
    assert list(task_data(_cfg(task))) == [str(task)]


def test_the_test_split_is_cut_to_what_the_fine_tunes_score(tmp_path):
    task = _bio_task(tmp_path / "t", n_test=10)
    (r,) = resolve_tasks(_cfg(task, max_eval_examples=3)).values()
    assert len(r.data.split("test")) == 3


@pytest.mark.parametrize("empty", [("dev",), ("dev", "test")])
def test_an_empty_split_is_refused_before_any_job_naming_it(tmp_path, empty):
    task = _bio_task(tmp_path / "t")
    for name in empty:
        (task / f"{name}.txt").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match=" and ".join(empty) + r" split") as e:
        resolve_tasks(_cfg(task))
    assert "\n" not in str(e.value)


def test_data_already_read_is_taken_as_it_is(tmp_path):
    task = _bio_task(tmp_path / "t", n_test=10)
    data = task_data(_cfg(task))
    (r,) = resolve_tasks(_cfg(task, max_eval_examples=2), datasets=data).values()
    assert len(r.data.split("test")) == 10  # not cut again: the driver's snapshot is what was keyed
