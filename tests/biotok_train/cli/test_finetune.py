"""biotok-train finetune / bench through CliRunner: a user's files, two tiny registered tasks as a
suite, and bad input as one error line (exit 2) with nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests._contract import assert_contract
from click.testing import CliRunner

from biotok_train.cli import main
from biotok_train.tasks import registry as tasks
from biotok_train.tasks.examples import ClassifyExample, PairExample, TaskData
from biotok_train.scores import compute

FAST = ["--epochs", "1", "--batch-size", "4", "--lr", "1e-3", "--max-length", "32", "-q"]


def _run(args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, tiny_wordpiece) -> Path:
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from biotok_train.hf_models import load_model_tokenizer

    out = tmp_path_factory.mktemp("clift") / "tiny-bert"
    shutil.copytree(tiny_wordpiece, out)
    tok = load_model_tokenizer(out)
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=64, max_position_embeddings=130)).save_pretrained(out)
    return out


def _tsv(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def plain(tmp_path) -> Path:
    d = tmp_path / "mydata"
    d.mkdir()
    for name, n in (("train", 12), ("dev", 4), ("test", 4)):
        _tsv(d / f"{name}.tsv", "id\ttext\tlabel",
             [f"{name}{i}\t{'fièvre aiguë' if i % 2 else 'toux sèche'} {i}\t{'ab'[i % 2]}" for i in range(n)])
    return d


def test_finetune_plain_files(tiny_model, plain, tmp_path):
    out = tmp_path / "out"
    res = _run(["finetune", tiny_model, "--task-type", "classify", "--train", plain / "train.tsv", "--dev",
                plain / "dev.tsv", "--test", plain / "test.tsv", "--out", out, *FAST])
    assert res.exit_code == 0, res.output
    assert "accuracy" in res.output
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["dataset"] == "mydata" and saved["task_info"]["metric"] == "accuracy"
    rows = [json.loads(l) for l in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [f"test{i}" for i in range(4)]
    assert compute("accuracy", [r["gold"] for r in rows], [r["pred"] for r in rows]).value == saved["accuracy"]
    again = _run(["finetune", tiny_model, "--task-type", "classify", "--train", plain / "train.tsv", "--dev",
                  plain / "dev.tsv", "--test", plain / "test.tsv", "--out", out, *FAST])
    assert_contract(again, "biotok-train", "already exists", "--force")


def test_finetune_plain_ner_with_scheme(tiny_model, tmp_path):
    sent = "Le O\npatient O\na O\nune O\ninsuffisance B-DISO\nrénale I-DISO\n. O\n\n"
    for name, n in (("train", 8), ("dev", 2), ("test", 2)):
        (tmp_path / f"{name}.conll").write_text(sent * n, encoding="utf-8")
    res = _run(["finetune", tiny_model, "--task-type", "ner", "--train", tmp_path / "train.conll", "--dev",
                tmp_path / "dev.conll", "--test", tmp_path / "test.conll", "--scheme", "bioul", *FAST])
    assert res.exit_code == 0, res.output
    assert "entity_f1" in res.output and "scheme bioul" in res.output


def test_list_names_every_task():
    res = _run(["finetune", "m", "--list"])
    assert res.exit_code == 0
    assert all(name in res.output for name in tasks.TASKS)


@pytest.mark.parametrize("args,needles", [
    (["--task", "chemprott"], ["unknown task 'chemprott'"]),
    (["--task", "ebm-pico"], ["not available"]),
    ([], ["--task NAME", "--task-type"]),
    (["--task-type", "classify", "--train", "x.tsv"], ["--dev", "--test"]),
    (["--task", "hoc", "--lr-grid", "1e-5,abc"], ["--lr-grid"]),
    (["--task", "hoc", "--train-fraction", "0"], ["--train-fraction"]),
])
def test_finetune_bad_arguments(args, needles):
    res = _run(["finetune", "nomodel", *args])
    assert res.exit_code == 2, res.output
    assert all(n in res.output for n in needles), res.output


def test_finetune_bad_row_names_file_and_line(plain, tmp_path):
    bad = _tsv(tmp_path / "bad.tsv", "text\tlabel", ["fièvre\ta", "toux\tb\textra"])
    out = tmp_path / "out"
    res = _run(["finetune", "nomodel", "--task-type", "classify", "--train", bad, "--dev", plain / "dev.tsv",
                "--test", plain / "test.tsv", "--out", out])
    assert_contract(res, "biotok-train", "bad.tsv:3", "columns")
    assert not out.exists()


def test_finetune_unknown_label_and_empty_split(plain, tmp_path):
    dev = _tsv(tmp_path / "dev.tsv", "text\tlabel", ["fièvre\tc"])
    res = _run(["finetune", "nomodel", "--task-type", "classify", "--train", plain / "train.tsv", "--dev", dev,
                "--test", plain / "test.tsv"])
    assert_contract(res, "biotok-train", "dev.tsv:2", "'c' not in the label set")
    empty = _tsv(tmp_path / "empty.tsv", "text\tlabel", [])
    res = _run(["finetune", "nomodel", "--task-type", "classify", "--train", plain / "train.tsv", "--dev", empty,
                "--test", plain / "test.tsv"])
    assert_contract(res, "biotok-train", "empty.tsv", "empty split")


def test_relation_without_both_masks(plain, tmp_path):
    bad = _tsv(tmp_path / "rel.tsv", "text\tlabel", ["@GENE$ et @DISEASE$\t1", "seul @GENE$ ici\t0"])
    res = _run(["finetune", "nomodel", "--task-type", "relation", "--train", bad, "--dev", bad, "--test", bad])
    assert_contract(res, "biotok-train", "rel.tsv:3", "both entities")


def test_model_without_a_matching_head(tiny_model, plain, tmp_path):
    from transformers import BartConfig, BartModel

    bart = tmp_path / "bart"
    shutil.copytree(tiny_model, bart)
    (bart / "model.safetensors").unlink()
    BartModel(BartConfig(vocab_size=2000, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                         decoder_attention_heads=2, encoder_ffn_dim=16, decoder_ffn_dim=16,
                         max_position_embeddings=64)).save_pretrained(bart)
    conll = tmp_path / "x.conll"
    conll.write_text("fièvre B-DISO\n\n", encoding="utf-8")
    out = tmp_path / "out"
    res = _run(["finetune", bart, "--task-type", "ner", "--train", conll, "--dev", conll, "--test", conll,
                "--out", out])
    assert_contract(res, "biotok-train", "bart", "AutoModelForTokenClassification")
    assert not out.exists()


@pytest.fixture()
def two_tiny_tasks(monkeypatch):
    """Two small tasks of two families, registered for the test only."""
    monkeypatch.setattr(tasks, "TASKS", dict(tasks.TASKS))

    def cls(i):
        return ClassifyExample(f"c{i}", "fièvre aiguë" if i % 2 else "toux sèche", "ab"[i % 2])

    def pair(i):
        return PairExample(f"p{i}", "fièvre aiguë", "fièvre" if i % 2 else "toux", float(i % 3))

    def data(name, kind, labels, make):
        ex = [make(i) for i in range(14)]
        return TaskData(name, kind, labels, tuple(ex[:8]), tuple(ex[8:11]), tuple(ex[11:]))

    tasks.register(tasks.TaskSpec("tiny-cls", None, "classify", "accuracy",
                                  lambda c, k: data("tiny-cls", "classify", ("a", "b"), cls), ("a", "b"),
                                  "classification"))
    tasks.register(tasks.TaskSpec("tiny-sts", None, "pair-regression", "pearson",
                                  lambda c, k: data("tiny-sts", "pair-regression", (), pair), (), "similarity"))
    return ["tiny-cls", "tiny-sts"]


def test_bench_two_tiny_tasks(tiny_model, two_tiny_tasks, tmp_path):
    out = tmp_path / "bench"
    res = _run(["bench", tiny_model, "--suite", "blurb", "--tasks", *two_tiny_tasks, "--seeds", "0", "1",
                "--out", out, *FAST])
    assert res.exit_code == 0, res.output
    assert {p.name for p in out.iterdir()} == {"bench.md", "bench.json", "bench.png", "runs"}
    bench = json.loads((out / "bench.json").read_text(encoding="utf-8"))
    by_task = {t["task"]: t for t in bench["tasks"]}
    assert set(by_task) == set(two_tiny_tasks) and bench["seeds"] == [0, 1]
    for name, t in by_task.items():
        for seed in (0, 1):
            rows = [json.loads(l) for l in (out / "runs" / name / f"seed-{seed}" / "predictions.jsonl").read_text(
                encoding="utf-8").splitlines()]
            value = compute(t["metric"], [r["gold"] for r in rows], [r["pred"] for r in rows]).value
            assert value == pytest.approx(t["by_seed"][str(seed)])
        values = list(t["by_seed"].values())
        assert t["mean"] == pytest.approx(sum(values) / 2)
    assert bench["by_family"] == {"classification": by_task["tiny-cls"]["mean"],
                                  "similarity": by_task["tiny-sts"]["mean"]}
    assert bench["score"] == pytest.approx((by_task["tiny-cls"]["mean"] + by_task["tiny-sts"]["mean"]) / 2)
    md = (out / "bench.md").read_text(encoding="utf-8")
    assert "| tiny-cls | classification | classify | accuracy |" in md and f"{bench['score']:.4f}" in md
    # every run folder: TensorBoard events (--report-to auto, tensorboard installed) and a model card, no model
    from biotok.card import parse_front_matter
    from biotok_train.tracking import read_scalars

    run0 = out / "runs" / "tiny-cls" / "seed-0"
    assert {"train/loss", "train/lr", "eval/dev_accuracy"} <= set(read_scalars(run0 / "tensorboard"))
    card = parse_front_matter((run0 / "README.md").read_text(encoding="utf-8"))
    assert card["datasets"] == ["tiny-cls"] and "base_model" not in card  # a local folder is no Hub id
    assert not (run0 / "model.safetensors").exists()
    again = _run(["bench", tiny_model, "--tasks", *two_tiny_tasks, "--seeds", "0", "--out", out, *FAST])
    assert_contract(again, "biotok-train", "already exists")


def test_bench_unknown_task_writes_nothing(tmp_path):
    out = tmp_path / "bench"
    assert_contract(_run(["bench", "nomodel", "--tasks", "nope", "--out", out]), "biotok-train", "unknown task 'nope'")
    assert not out.exists()
