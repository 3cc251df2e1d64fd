"""biotok_train.tracking: scalars reach TensorBoard event files that tensorboard's reader reads back."""

from __future__ import annotations

import pytest

from biotok.errors import ConfigError
from biotok_train.tracking import Tracker, read_scalars, resolve_report_to


def test_scalars_round_trip_through_tensorboard(tmp_path):
    with Tracker(tmp_path, "tensorboard") as t:
        for step in (1, 2, 3):
            t.scalars(step, {"loss": 5.0 - step, "lr": 1e-3, "note": "x", "nan": float("nan"), "flag": True},
                      prefix="train/")
    got = read_scalars(tmp_path)
    assert sorted(got) == ["train/loss", "train/lr"]
    assert [(s, round(v, 3)) for s, v in got["train/loss"]] == [(1, 4.0), (2, 3.0), (3, 2.0)]


def test_none_writes_nothing_and_bad_values_are_refused(tmp_path):
    with Tracker(tmp_path, "none") as t:
        t.scalars(1, {"loss": 1.0})
    assert not any(tmp_path.iterdir())
    assert resolve_report_to("auto") == "tensorboard"  # installed with the [train] extra
    with pytest.raises(ConfigError, match="wandb"):
        resolve_report_to("wandb")
