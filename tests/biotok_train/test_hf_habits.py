"""Hugging Face habits on what biotok writes: TensorBoard events, fill-mask and NER pipelines, model cards."""

from __future__ import annotations

import json

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


# --- fine-tuning: a tiny NER run made from the CLI ---------------------------------------------
NER_SENT = "Le\tO\npatient\tO\nprésente\tO\nune\tO\nfièvre\tB-SIGN\nélevée\tI-SIGN\n.\tO\n\n"


@pytest.fixture(scope="module")
def bio(tmp_path_factory):
    d = tmp_path_factory.mktemp("hfbio")
    for split, n in (("train", 24), ("dev", 2), ("test", 2)):
        (d / f"{split}.tsv").write_text(NER_SENT * n, encoding="utf-8")
    return d


def _finetune(model, bio, out, *extra):
    return CliRunner().invoke(main, ["finetune", str(model), "--task-type", "ner", "--train", str(bio / "train.tsv"),
                                     "--dev", str(bio / "dev.tsv"), "--test", str(bio / "test.tsv"), "--epochs", "4",
                                     "--batch-size", "8", "--lr", "1e-3", "--out", str(out), "--no-progress",
                                     "--report-to", "tensorboard", *extra])


@pytest.fixture(scope="module")
def ner_run(mlm_run, bio, tmp_path_factory):
    out = tmp_path_factory.mktemp("hfner") / "ner"
    r = _finetune(mlm_run, bio, out)
    assert r.exit_code == 0, r.output
    return out


def test_ner_run_loads_in_the_token_classification_pipeline_with_named_labels(ner_run):
    from transformers import pipeline

    ner = pipeline("token-classification", model=str(ner_run), aggregation_strategy="simple", device="cpu")
    assert set(ner.model.config.id2label.values()) == {"O", "B-SIGN", "I-SIGN"}
    every = ner("Le patient présente une fièvre élevée .", ignore_labels=[])
    groups = {e["entity_group"] for e in every}
    assert groups and groups <= {"O", "SIGN"}  # named as in the training data, never LABEL_0
    words = [w for e in every for w in e["word"].split()]
    assert "fièvre" in " ".join(words) and all(0 <= e["score"] <= 1 for e in every)


def test_ner_run_scalars_open_in_tensorboard(ner_run):
    scalars = read_scalars(ner_run / "tensorboard")
    result = json.loads((ner_run / "results.json").read_text(encoding="utf-8"))
    assert [s for s, _ in scalars["train/loss"]] == list(range(1, result["steps"] + 1))
    dev = f"eval/dev_{result['dev_metric']}"
    assert {"train/lr", dev, "eval/dev_loss", "eval/examples_per_s"} <= set(scalars)
    assert [v for _, v in scalars[dev]] == pytest.approx([h[f"dev_{result['dev_metric']}"] for h in result["history"]])


def test_finetune_report_to_none_writes_no_events(mlm_run, bio, tmp_path):
    r = _finetune(mlm_run, bio, tmp_path / "n", "--report-to", "none", "--max-steps", "1")
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "n" / "tensorboard").exists() and (tmp_path / "n" / "README.md").is_file()


# --- model cards -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def transfer_out(mlm_run, tiny_wordpiece, tmp_path_factory):
    out = tmp_path_factory.mktemp("hftransfer") / "moved"
    r = CliRunner().invoke(main, ["transfer", str(mlm_run), "--tokenizer", str(tiny_wordpiece), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def _card(folder):
    from biotok.card import parse_front_matter

    text = (folder / "README.md").read_text(encoding="utf-8")
    return parse_front_matter(text), text


def test_every_output_kind_has_a_card_that_parses(tiny_wordpiece, mlm_run, ner_run, transfer_out, data):
    meta, text = _card(tiny_wordpiece)
    assert "tokenizer" in meta["tags"]
    meta, text = _card(mlm_run)
    assert meta["pipeline_tag"] == "fill-mask" and meta["library_name"] == "transformers"
    assert "fill-mask" in meta["tags"] and "base_model" not in meta
    assert "biotok-train mlm" in text and "wordpiece" in text  # the command and the vocabulary's provenance
    corpus_sha = json.loads((tiny_wordpiece / "biotok.json").read_text())["corpus"]["files"][0]["sha256"]
    assert corpus_sha in text and "steps: 4 of 4" in text
    meta, text = _card(ner_run)
    assert meta["pipeline_tag"] == "token-classification" and "base_model" not in meta  # a local path is no Hub id
    assert meta["datasets"] and "micro_f1" in meta["metrics"] and "biotok-train finetune" in text
    result = json.loads((ner_run / "results.json").read_text(encoding="utf-8"))
    assert f"{result['micro_f1']:.4g}" in text and "`B-SIGN`" in text
    meta, text = _card(transfer_out)
    assert "base_model" not in meta and {"vocabulary-transfer", "fvt"} <= set(meta["tags"])
    assert corpus_sha in text  # the new tokenizer's provenance


def test_cards_are_byte_identical_on_rerun(mlm_run, bio, data, tmp_path):
    """The same command (so --force both times) gives the same card bytes: no time, no temp path."""
    ner = tmp_path / "ner"
    cards = []
    for _ in range(2):
        r = _finetune(mlm_run, bio, ner, "--force", "--max-steps", "2")
        assert r.exit_code == 0, r.output
        cards.append((ner / "README.md").read_bytes())
    run = tmp_path / "run"
    for _ in range(2):
        r = CliRunner().invoke(main, ["mlm", str(data), "--size", "tiny", "--steps", "2", "--batch-size", "2",
                                      "--device", "cpu", "--out", str(run), "--no-progress", "--report-to", "none",
                                      "--force"])
        assert r.exit_code == 0, r.output
        cards.append((run / "README.md").read_bytes())
    assert cards[0] == cards[1] and cards[2] == cards[3]


def test_probe_runs_open_in_tensorboard(tiny_wordpiece, sample_lines, tmp_path):
    (tmp_path / "train.txt").write_text("\n".join(sample_lines[:80]) + "\n", encoding="utf-8")
    (tmp_path / "held.txt").write_text("\n".join(sample_lines[-10:]) + "\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["probe", str(tiny_wordpiece), "--corpus", str(tmp_path / "train.txt"), "--heldout",
                                  str(tmp_path / "held.txt"), "--steps", "4", "--batch-size", "2", "--seq-len", "32",
                                  "--hidden", "16", "--n-resamples", "10", "--out", str(tmp_path / "p"), "-q",
                                  "--report-to", "tensorboard"])
    assert r.exit_code == 0, r.output
    events = sorted((tmp_path / "p" / "runs").rglob("tensorboard"))
    assert len(events) == 1
    scalars = read_scalars(events[0])
    assert scalars["train/loss"] and [s for s, _ in scalars["eval/bits_per_char"]] == [4]
    bpc = json.loads((tmp_path / "p" / "probe.json").read_text(encoding="utf-8"))["arms"][0]["bits_per_char"]["mean"]
    assert scalars["eval/bits_per_char"][0][1] == pytest.approx(bpc, rel=1e-5)


def test_continued_run_card_names_its_base_and_the_heldout_numbers(mlm_run, data, tmp_path):
    out = tmp_path / "cont"
    r = CliRunner().invoke(main, ["mlm", str(data), "--init-from", str(mlm_run), "--steps", "2", "--batch-size", "2",
                                  "--device", "cpu", "--out", str(out), "--no-progress", "--report-to", "none",
                                  "--heldout", str(data)])
    assert r.exit_code == 0, r.output
    meta, text = _card(out)
    assert "base_model" not in meta and f"continued from `{mlm_run}`" in text
    held = json.loads((out / "heldout.json").read_text(encoding="utf-8"))
    assert "Held-out [MASK] prediction at step 2" in text and f"| this model | {held['loss']:.4g} |" in text


def test_electra_run_card(data, tmp_path):
    out = tmp_path / "electra"
    r = CliRunner().invoke(main, ["electra", str(data), "--steps", "1", "--batch-size", "2", "--device", "cpu",
                                  "--out", str(out), "--no-progress", "--report-to", "none"])
    assert r.exit_code == 0, r.output
    meta, text = _card(out)
    assert "electra" in meta["tags"] and "pipeline_tag" not in meta and 'subfolder="generator"' in text
    (snippet,) = _python_blocks(text)
    scope: dict = {}
    exec(snippet.replace("fill(f", "out = fill(f"), scope)  # noqa: S102 - the card's snippet: the generator fills
    assert scope["out"] and all(0 <= o["score"] <= 1 for o in scope["out"])


def _python_blocks(text):
    from markdown_it import MarkdownIt

    return [t.content for t in MarkdownIt("commonmark").parse(text.split("---\n", 2)[2])
            if t.type == "fence" and t.info == "python"]


def test_cards_title_and_snippets_run_from_where_the_folders_are(data, bio, tmp_path, monkeypatch):
    """Issue 39: '# bert\\-tiny' and pipeline(model="bert-tiny") for a folder at runs/bert-tiny. The
    title is the folder's name as typed; each card's snippet runs from the directory the command ran in."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["mlm", str(data), "--size", "tiny", "--steps", "2", "--batch-size", "2",
                                  "--device", "cpu", "--out", "runs/bert-tiny", "--no-progress", "--report-to", "none"])
    assert r.exit_code == 0, r.output
    r = _finetune("runs/bert-tiny", bio, "results/ner-1", "--max-steps", "2", "--report-to", "none")
    assert r.exit_code == 0, r.output
    for folder, title, call in (("runs/bert-tiny", "# bert-tiny: a biotok BERT pretraining run", "fill("),
                                ("results/ner-1", "# ner-1: bert-tiny fine-tuned on", "nlp(")):
        meta, text = _card(tmp_path / folder)
        assert f"\n{title}" in text and "base_model" not in meta
        (snippet,) = _python_blocks(text)
        assert f'model="{folder}"' in snippet
        scope: dict = {}
        exec(snippet, scope)  # noqa: S102 - the card's own snippet, as a user pastes it
        out = scope["fill"](f"le patient {scope['fill'].tokenizer.mask_token} .") if call == "fill(" \
            else scope["nlp"]("Le patient présente une fièvre élevée .")
        assert isinstance(out, list)
