"""Held-out [MASK] numbers beside their floors (unigram cross-entropy, most-frequent-piece top-1)
for mlm and electra: a context-free model scores exactly the floor, the pretraining loop and the
command line report them instead of a single step's training loss."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from biotok_train.config import PrepareConfig, PretrainConfig  # noqa: E402
from biotok_train.errors import TokenizerMismatchError  # noqa: E402
from biotok_train.pretrain.heldout import describe, evaluate_heldout, unigram_counts  # noqa: E402
from biotok_train.pretrain.packed import PackedData  # noqa: E402
from biotok_train.pretrain.prepare import prepare  # noqa: E402

torch.set_num_threads(1)
FAST = dict(size="tiny", batch_size=4, log_every=2, device="cpu")


@pytest.fixture(scope="module")
def datasets(sample_lines, tiny_wordpiece, tmp_path_factory):
    d = tmp_path_factory.mktemp("hdata")
    (d / "train.txt").write_text("\n".join(sample_lines[:60]) + "\n", encoding="utf-8")
    (d / "held.txt").write_text("\n".join(sample_lines[-10:]) + "\n", encoding="utf-8")
    cfg = PrepareConfig(seq_len=64)
    train = prepare([str(d / "train.txt")], tiny_wordpiece, cfg, d / "train", progress=False).path
    held = prepare([str(d / "held.txt")], tiny_wordpiece, cfg, d / "held", progress=False).path
    return train, held


class ContextFree(torch.nn.Module):
    """A masked LM that ignores its input: always the unigram distribution."""

    def __init__(self, log_p: np.ndarray) -> None:
        super().__init__()
        self.config = SimpleNamespace(type_vocab_size=2)
        self.log_p = torch.tensor(log_p, dtype=torch.float32)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        return SimpleNamespace(logits=self.log_p.expand(*input_ids.shape, -1))


def test_a_context_free_model_scores_exactly_the_floor(datasets):
    train, held = (PackedData(p) for p in datasets)
    counts = unigram_counts(train)
    assert counts.sum() == len(train.tokens) and counts[train.cls_id] == 0
    log_p = np.log(counts + 1) - math.log(counts.sum() + len(counts))
    h = evaluate_heldout(ContextFree(log_p), held, counts)
    assert h.positions > 20 and h.sequences == len(held)
    assert h.loss == pytest.approx(h.floor_loss, rel=1e-5) and h.top1 == pytest.approx(h.floor_top1)
    assert h.most_frequent == int(np.argmax(counts)) and 0 < h.floor_top1 < 1
    s = h.summary(n_resamples=200)
    assert abs(s["gap"]) < 1e-4 and not s["left_plateau"]
    assert "on the plateau" in describe(s)
    # the masked positions are fixed: a second evaluation selects the same ones
    assert evaluate_heldout(ContextFree(log_p), held, counts).rows == h.rows


@pytest.mark.parametrize("objective", ["mlm", "electra"])
def test_pretraining_reports_heldout_numbers(datasets, tmp_path, objective):
    from biotok_train.pretrain.loop import pretrain

    train, held = datasets
    cfg = PretrainConfig(objective=objective, steps=4, heldout=str(held), **FAST)
    r = pretrain(train, cfg, tmp_path / "run", progress=False)
    saved = json.loads((tmp_path / "run" / "heldout.json").read_text())
    assert saved == json.loads(json.dumps(r.heldout))
    assert saved["model"] == ("generator" if objective == "electra" else "bert")
    # 4 steps: still near log(vocab), above the unigram floor
    assert saved["loss"] > saved["floor_loss"] and not saved["left_plateau"]
    assert saved["gap_low"] <= saved["gap"] <= saved["gap_high"] and 0 <= saved["top1"] <= 1
    if objective == "mlm":  # the saved model scores what the training module scored
        from biotok_train.pretrain.heldout import evaluate_saved, pooled_summary

        h = evaluate_saved(tmp_path / "run", train, held)
        assert h.loss == pytest.approx(saved["loss"], rel=1e-4) and h.floor_loss == pytest.approx(saved["floor_loss"])
        pooled = pooled_summary({0: h.rows, 1: h.rows}, n_resamples=200)
        assert pooled["seeds"] == 2 and pooled["positions"] == h.positions
        assert pooled["loss"] == pytest.approx(h.loss) and pooled["gap"] == pytest.approx(h.loss - h.floor_loss)


def test_heldout_of_another_tokenizer_is_refused_before_training(datasets, tiny_unigram, tmp_path, sample_lines):
    from biotok_train.pretrain.loop import pretrain

    (tmp_path / "c.txt").write_text("\n".join(sample_lines[:5]) + "\n", encoding="utf-8")
    other = prepare([str(tmp_path / "c.txt")], tiny_unigram, PrepareConfig(seq_len=64), tmp_path / "o",
                    progress=False).path
    with pytest.raises(TokenizerMismatchError, match="--heldout"):
        pretrain(datasets[0], PretrainConfig(steps=2, heldout=str(other), **FAST), tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_command_line_prints_heldout_not_a_single_step_loss(datasets, tmp_path):
    from biotok_train.cli import main

    train, held = datasets
    base = ["mlm", str(train), "--steps", "2", "--batch-size", "4", "--device", "cpu", "--no-progress"]
    r = CliRunner().invoke(main, [*base, "--heldout", str(held), "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    assert "held-out [MASK] loss" in r.output and "unigram floor" in r.output and "most frequent piece" in r.output
    r = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert "not held-out" in r.output and "-> " not in r.output
