"""A pretraining stopped between two metrics rows (SIGTERM or Ctrl-C at step 3 of rows every 4)
then resumed logs the rows of a run never stopped (issue 40: the stop wrote a row at step 3, so
the ablation's loss curve had one row more after a resume). The steps not yet logged travel in
the checkpoint."""

from __future__ import annotations

import json
import os
import signal

import pytest

torch = pytest.importorskip("torch")

import biotok_train.pretrain.loop as loop  # noqa: E402
from biotok.errors import Terminated  # noqa: E402
from biotok_train.config import OptimConfig, PrepareConfig, PretrainConfig  # noqa: E402
from biotok_train.pretrain.loop import pretrain  # noqa: E402
from biotok_train.pretrain.prepare import prepare  # noqa: E402

TIMED = ("time", "tokens_per_s", "mfu")  # wall-clock figures: the only fields that may differ


@pytest.fixture(scope="module")
def data(sample_lines, tiny_wordpiece, tmp_path_factory):
    d = tmp_path_factory.mktemp("rows")
    (d / "c.txt").write_text("\n".join(sample_lines[:80]) + "\n", encoding="utf-8")
    return prepare([str(d / "c.txt")], tiny_wordpiece, PrepareConfig(seq_len=32), d / "data", progress=False).path


def _rows(run) -> list[dict]:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    return [{k: v for k, v in r.items() if k not in TIMED} for r in rows]


@pytest.mark.parametrize("sig,stops", [(signal.SIGTERM, Terminated), (signal.SIGINT, KeyboardInterrupt)])
def test_a_stop_between_two_rows_then_resume_logs_the_straight_rows(data, tmp_path, monkeypatch, sig, stops):
    torch.set_num_threads(1)
    cfg = PretrainConfig(steps=10, size="tiny", batch_size=2, log_every=4, device="cpu", report_to="none",
                         optim=OptimConfig(lr=1e-3))
    straight = pretrain(data, cfg, tmp_path / "straight", progress=False)
    real, calls = loop.mask_tokens, {"n": 0}

    def stopping(*a, **k):
        calls["n"] += 1
        if calls["n"] == 3:  # during step 3: rows are at steps 4, 8 and 10
            os.kill(os.getpid(), sig)
        return real(*a, **k)

    monkeypatch.setattr(loop, "mask_tokens", stopping)
    with pytest.raises(stops):
        pretrain(data, cfg, tmp_path / "run", progress=False)
    assert (tmp_path / "run" / "metrics.jsonl").read_text(encoding="utf-8") == ""  # no row at step 3
    monkeypatch.setattr(loop, "mask_tokens", real)
    resumed = pretrain(data, cfg, tmp_path / "run", resume=True, progress=False)
    assert _rows(tmp_path / "run") == _rows(tmp_path / "straight")
    assert [r["step"] for r in _rows(tmp_path / "run")] == [4, 8, 10]
    assert resumed.losses == straight.losses
    assert (tmp_path / "run" / "model.safetensors").read_bytes() == (tmp_path / "straight" / "model.safetensors").read_bytes()
