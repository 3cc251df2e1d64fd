"""The multi-label head: a threshold fixed, or chosen on dev from a grid (MORFITT)."""

from __future__ import annotations

import pytest

from biotok.errors import ConfigError
from biotok_train.config import FinetuneConfig
from biotok_train.finetune import make_head, task_info
from biotok_train.finetune.multilabel import MultiLabelTask
from biotok_train.tasks import TASKS, TaskSpec
from biotok_train.tasks.examples import MultiLabelExample


def _logit(p: float) -> float:
    import math

    return math.log(p / (1 - p))


def test_tune_keeps_the_grid_threshold_with_the_best_dev_score():
    import torch

    head = MultiLabelTask(0.5, grid=(0.1, 0.3, 0.5, 0.7))
    ex = [MultiLabelExample("1", "t", ("a",)), MultiLabelExample("2", "t", ("b",)),
          MultiLabelExample("3", "t", ("a", "b"))]
    # the right labels have sigmoid 0.2-0.4, the wrong ones 0.05: only 0.1 gets everything right
    probs = [[0.4, 0.05], [0.05, 0.2], [0.35, 0.25]]
    logits = [torch.tensor([_logit(p) for p in row]) for row in probs]
    head.tune(ex, [], logits, ["a", "b"])
    assert head.threshold == 0.1
    assert [r["threshold"] for r in head.search] == [0.1, 0.3, 0.5, 0.7]
    assert head.search[0]["weighted_f1"] == 1.0 and head.search[-1]["weighted_f1"] == 0.0
    assert head.decode(ex, [], logits, ["a", "b"]) == [("a",), ("b",), ("a", "b")]
    s = head.score(ex, head.decode(ex, [], logits, ["a", "b"]), ["a", "b"])
    assert s.metrics["threshold"] == 0.1 and s.report["threshold_search"][1]["threshold"] == 0.3
    # ties keep the first threshold of the grid; without a grid tune changes nothing
    fixed = MultiLabelTask(0.7)
    fixed.tune(ex, [], logits, ["a", "b"])
    assert fixed.threshold == 0.7 and "threshold" not in fixed.score(ex, [()] * 3, ["a", "b"]).metrics


def test_morfitt_chooses_its_threshold_on_dev_unless_one_is_given():
    morfitt = TASKS["morfitt"]
    assert morfitt.threshold == "dev"
    head = make_head("multilabel", FinetuneConfig(threshold_grid=(0.2, 0.4)), morfitt)
    assert head.grid == (0.2, 0.4) and head.metric == "weighted_f1_multilabel"
    assert make_head("multilabel", FinetuneConfig(threshold=0.3), morfitt).grid == ()
    assert task_info(morfitt, "multilabel", FinetuneConfig())["threshold"] == "dev"
    assert make_head("multilabel", FinetuneConfig(), TASKS["hoc"]).grid == ()  # HoC keeps 0.5
    assert FinetuneConfig().threshold_grid[0] == 0.05 and FinetuneConfig().threshold_grid[-1] == 0.95
    with pytest.raises(ConfigError, match="threshold-grid"):
        FinetuneConfig(threshold_grid=(0.5, 1.2))
    with pytest.raises(Exception, match="number or 'dev'"):
        TaskSpec("m", None, "multilabel", "weighted_f1_multilabel", lambda c, k: None, threshold="best")
