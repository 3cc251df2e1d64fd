"""``biotok-train prepare | mlm | electra | plot`` through click: output, and one-line errors (exit 2)."""

from __future__ import annotations

import pytest

from tests._contract import assert_contract
from click.testing import CliRunner

pytest.importorskip("torch")

from biotok_train.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def corpus(sample_lines, tmp_path_factory):
    p = tmp_path_factory.mktemp("ccorpus") / "c.txt"
    p.write_text("\n".join(sample_lines[:60]) + "\n", encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def data(corpus, tiny_wordpiece, tmp_path_factory):
    out = tmp_path_factory.mktemp("cdata") / "data"
    r = CliRunner().invoke(main, ["prepare", str(corpus), "--tokenizer", str(tiny_wordpiece),
                                  "--seq-len", "64", "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "sequences of 64" in r.output and "uint16" in r.output
    return out


def test_mlm_then_plot(data, tmp_path):
    run = tmp_path / "run"
    r = CliRunner().invoke(main, ["mlm", str(data), "--size", "tiny", "--steps", "3", "--batch-size", "4",
                                  "--wwm", "--optim", "lamb", "--device", "cpu", "--out", str(run),
                                  "--no-progress", "--log-every", "1"])
    assert r.exit_code == 0, r.output
    assert "3 steps" in r.output and "tokens/s" in r.output and "MFU n/a" in r.output
    r = CliRunner().invoke(main, ["plot", str(run)])
    assert r.exit_code == 0 and (run / "loss.png").is_file()


def test_electra_command(data, tmp_path):
    r = CliRunner().invoke(main, ["electra", str(data), "--steps", "1", "--batch-size", "2", "--device", "cpu",
                                  "--out", str(tmp_path / "e"), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "e" / "generator" / "config.json").is_file()


def test_missing_data_dir(tmp_path):
    r = CliRunner().invoke(main, ["mlm", str(tmp_path / "nope"), "--out", str(tmp_path / "r")])
    assert_contract(r, "biotok-train", "not found", "prepare")


def test_unknown_size(data, tmp_path):
    r = CliRunner().invoke(main, ["mlm", str(data), "--size", "huge", "--out", str(tmp_path / "r")])
    assert_contract(r, "biotok-train", "unknown size 'huge'")


def test_data_of_another_tokenizer(data, tmp_path, sample_lines):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(sample_lines[:30], trainers.WordPieceTrainer(
        vocab_size=200, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    tok.save(str(tmp_path / "other.json"))
    r = CliRunner().invoke(main, ["mlm", str(data), "--tokenizer", str(tmp_path / "other.json"),
                                  "--out", str(tmp_path / "r")])
    assert_contract(r, "biotok-train", "prepared with tokenizer")


def test_prepare_refuses_existing_output(corpus, tiny_wordpiece, data):
    r = CliRunner().invoke(main, ["prepare", str(corpus), "-t", str(tiny_wordpiece), "--out", str(data),
                                  "--no-progress"])
    assert_contract(r, "biotok-train", "--force")


def test_plot_without_metrics(tmp_path):
    assert_contract(CliRunner().invoke(main, ["plot", str(tmp_path)]), "biotok-train", "metrics.jsonl")


def test_a_compile_failure_is_one_error_line_exit_2(data, tmp_path, monkeypatch):
    """`biotok-train electra ... --compile` whose compilation fails: one line naming the root cause."""
    import torch

    def broken(module, config):
        def backend(gm, example_inputs):
            raise RuntimeError("outer advice\nSymIntArrayRef expected to contain only concrete integers")

        return torch.compile(module, backend=backend)

    monkeypatch.setattr("biotok_train.pretrain.loop.compile_module", broken)
    r = CliRunner().invoke(main, ["electra", str(data), "--size", "tiny", "--steps", "2", "--batch-size", "2",
                                  "--compile", "--device", "cpu", "--out", str(tmp_path / "run"), "--no-progress",
                                  "--report-to", "none"])
    assert_contract(r, "biotok-train", "torch.compile", "SymIntArrayRef expected", "--no-compile")


def test_compile_mode_is_checked(data, tmp_path):
    r = CliRunner().invoke(main, ["mlm", str(data), "--compile-mode", "fast", "--out", str(tmp_path / "r")])
    assert r.exit_code == 2 and "fast" in r.output
