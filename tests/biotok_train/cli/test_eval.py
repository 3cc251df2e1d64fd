"""biotok-train ner / classify (aliases of finetune) / eval-mlm / fill-mask / ablate: bad inputs give one line
and exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests._contract import assert_contract
from click.testing import CliRunner

from biotok_train.cli import main
from tests.conftest import REPO


def _run(args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, tiny_wordpiece) -> Path:
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from biotok_train.hf_models import load_model_tokenizer

    out = tmp_path_factory.mktemp("cli") / "tiny-bert"
    shutil.copytree(tiny_wordpiece, out)
    tok = load_model_tokenizer(out)
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=64, max_position_embeddings=130)).save_pretrained(out)
    return out


def test_commands_registered():
    res = _run(["--help"])
    for cmd in ("ner", "eval-mlm", "fill-mask", "ablate"):
        assert cmd in res.output


def test_ner_missing_data(tmp_path):
    assert_contract(_run(["ner", "nomodel", "--data", tmp_path / "missing.txt"]), "biotok-train", "unknown dataset")


def test_ner_bad_tag_sequence(tmp_path):
    d = tmp_path / "bio"
    d.mkdir()
    (d / "train.txt").write_text("Le O\ndiabète B-ety\n\nLa O\ntoux I-ety\n", encoding="utf-8")
    (d / "test.txt").write_text("Le O\n", encoding="utf-8")
    assert_contract(_run(["ner", "nomodel", "--data", d]), "biotok-train", "train.txt:5", "I-ety follows O")


def test_ner_unknown_model(tmp_path):
    bio = tmp_path / "x.txt"
    bio.write_text("".join(f"mot{i} O\nfièvre B-ety\n\n" for i in range(200)), encoding="utf-8")
    assert_contract(_run(["ner", tmp_path / "nomodel", "--data", bio]), "biotok-train", "nomodel")


def test_ner_named_dataset_needs_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("BIOTOK_SHARED_DATA", str(tmp_path))  # a shared-data folder without e3c's files
    assert_contract(_run(["ner", "nomodel", "--data", "e3c"]), "biotok-train", "e3c")


def test_eval_mlm_missing_corpus(tmp_path):
    assert_contract(_run(["eval-mlm", "nomodel", "--corpus", tmp_path / "none.txt"]), "biotok-train", "not found")


def test_fill_mask_needs_text_or_cloze():
    assert_contract(_run(["fill-mask", "nomodel"]), "biotok-train", "--cloze")


def test_fill_mask_bad_cloze(tmp_path):
    f = tmp_path / "c.tsv"
    f.write_text("pas de masque\tmot\n", encoding="utf-8")
    assert_contract(_run(["fill-mask", "nomodel", "--cloze", f]), "biotok-train", "c.tsv:1")


def test_ablate_missing_corpus(tmp_path):
    assert_contract(_run(["ablate", "--tokenizers", "a", "b", "--corpus", tmp_path / "none.txt", "--out", tmp_path / "o"]), "biotok-train",
                    "not found")


def test_ner_eval_fill_on_tiny_model(tiny_model, tmp_path, sample_corpus):
    d = tmp_path / "bio"
    d.mkdir()
    sent = "Le O\npatient O\nprésente O\nune O\ninsuffisance B-ety\nrénale I-ety\n. O\n\n"
    (d / "train.txt").write_text(sent * 12, encoding="utf-8")
    (d / "dev.txt").write_text(sent * 2, encoding="utf-8")
    (d / "test.txt").write_text(sent * 3, encoding="utf-8")
    res = _run(["ner", tiny_model, "--data", d, "--epochs", "1", "--batch-size", "4", "--max-steps", "2", "--out", tmp_path / "ner", "-q"])
    assert res.exit_code == 0, res.output
    assert "micro avg" in res.output and "ety" in res.output
    saved = json.loads((tmp_path / "ner" / "results.json").read_text(encoding="utf-8"))
    assert saved["steps"] == 2 and saved["report"]["ety"]["support"] == 3

    res = _run(["eval-mlm", tiny_model, "--corpus", sample_corpus, "--n-words", "20", "--out", tmp_path / "mlm.json"])
    assert res.exit_code == 0, res.output
    mlm = json.loads((tmp_path / "mlm.json").read_text(encoding="utf-8"))
    assert mlm["n_words"] + mlm["skipped"] == 20 and set(mlm["accuracy"]) == {"top1", "top3", "top5"}

    res = _run(["fill-mask", tiny_model, "Le patient a été traité par <mask> .", "-k", "3"])
    assert res.exit_code == 0, res.output
    assert [l.startswith("  mask 1: ") for l in res.stdout.splitlines() if l.strip()] == [False, True]

    cloze = REPO / "corpora" / "cloze" / "fr_medical_cloze.tsv"
    res = _run(["fill-mask", tiny_model, "--cloze", cloze])
    assert res.exit_code == 0 and "top-5" in res.output, res.output


def test_classify_unknown_dataset():
    assert_contract(_run(["classify", "nomodel", "--data", "nope"]), "biotok-train", "unknown classify task 'nope'",
                    "frenchmedmcqa-nbr")


def test_ner_and_classify_are_aliases_of_finetune(tmp_path):
    """They run the finetune command (same errors, same checks) and refuse a task of another type."""
    assert_contract(_run(["ner", "nomodel", "--data", "chemprot"]), "biotok-train", "relation task", "finetune --task chemprot")
    assert_contract(_run(["classify", "nomodel", "--data", "e3c"]), "biotok-train", "ner task")
    alias, direct = (_run([*cmd, "--batch-size", "0"]) for cmd in (["ner", "nomodel", "--data", "e3c"],
                                                                   ["finetune", "nomodel", "--task", "e3c"]))
    assert_contract(alias, "biotok-train", "batch")
    assert alias.output == direct.output
