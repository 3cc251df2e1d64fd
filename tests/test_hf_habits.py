"""Hugging Face habits on what biotok writes: TensorBoard events, fill-mask and NER pipelines, model cards."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")

from biotok_train.cli import main  # noqa: E402
from biotok_train.tracking import read_scalars  # noqa: E402


@pytest.fixture(scope="module")
def data(sample_lines, tiny_wordpiece, tmp_path_factory):
    corpus = tmp_path_factory.mktemp("hfcorpus") / "c.txt"
    corpus.write_text("\n".join(sample_lines[:60]) + "\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("hfdata") / "data"
    r = CliRunner().invoke(main, ["prepare", str(corpus), "--tokenizer", str(tiny_wordpiece),
                                  "--seq-len", "64", "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def mlm_run(data, tmp_path_factory):
    run = tmp_path_factory.mktemp("hfrun") / "run"
    r = CliRunner().invoke(main, ["mlm", str(data), "--size", "tiny", "--steps", "4", "--batch-size", "4",
                                  "--device", "cpu", "--out", str(run), "--no-progress", "--log-every", "2",
                                  "--report-to", "tensorboard"])
    assert r.exit_code == 0, r.output
    return run


def test_pretraining_scalars_open_in_tensorboard(mlm_run):
    scalars = read_scalars(mlm_run / "tensorboard")
    assert [s for s, _ in scalars["train/loss"]] == [2, 4]
    assert {"train/lr", "train/tokens_per_s"} <= set(scalars)


def test_report_to_none_writes_no_events(data, tmp_path):
    r = CliRunner().invoke(main, ["mlm", str(data), "--steps", "1", "--batch-size", "2", "--device", "cpu",
                                  "--out", str(tmp_path / "r"), "--no-progress", "--report-to", "none"])
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "r" / "tensorboard").exists()


def test_fill_mask_pipeline_loads_a_pretraining_run(mlm_run):
    from transformers import pipeline

    fill = pipeline("fill-mask", model=str(mlm_run), device="cpu")
    out = fill(f"le patient présente une {fill.tokenizer.mask_token} .", top_k=3)
    assert len(out) == 3 and all(isinstance(o["token_str"], str) and 0 <= o["score"] <= 1 for o in out)
