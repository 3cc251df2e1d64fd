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
    with pytest.raises(ConfigError, match="wandb"):
        resolve_report_to("wandb")


@pytest.mark.parametrize("installed", [True, False])
def test_auto_follows_whether_tensorboard_is_installed(tmp_path, monkeypatch, installed):
    """``auto`` writes events when tensorboard can be imported and nothing (no error) when it
    cannot; ``tensorboard`` without the package is one line saying what to install."""
    import importlib.util

    import biotok_train.tracking as tracking

    real = importlib.util.find_spec
    monkeypatch.setattr(tracking.importlib.util, "find_spec",
                        lambda name, *a: (real(name, *a) if installed else None) if name == "tensorboard"
                        else real(name, *a))
    assert resolve_report_to("auto") == ("tensorboard" if installed else "none")
    with Tracker(tmp_path, "auto") as t:
        t.scalars(1, {"loss": 1.0})
    assert (tmp_path / "tensorboard").is_dir() == installed
    if not installed:
        with pytest.raises(ConfigError, match="pip install tensorboard"):
            resolve_report_to("tensorboard")
