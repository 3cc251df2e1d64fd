"""NER fine-tuning: first-piece labels, chunking, and a seqeval report that a test recomputes."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from biotok_train.config import FinetuneConfig as NerConfig
from biotok.datasets.bio import Sentence
from biotok_train.tasks import TaskData, load
from biotok_train.finetune.ner import encode, finetune_ner, format_report, score
from biotok_train.hf_models import load_model_tokenizer


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, tiny_wordpiece) -> Path:
    """A 2-layer, hidden-32 BertForMaskedLM built from a config, saved with the tokenizer."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    out = tmp_path_factory.mktemp("model") / "tiny-bert"
    shutil.copytree(tiny_wordpiece, out)
    tok = load_model_tokenizer(out)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=130, pad_token_id=tok.pad_id)
    BertForMaskedLM(cfg).save_pretrained(out)
    return out


def strict_entities(tags: list[str]) -> set[tuple[str, int, int]]:
    """Independent strict-IOB2 extraction: B-X then I-X*; a stray I- is no entity."""
    out, i = set(), 0
    while i < len(tags):
        if tags[i].startswith("B-"):
            t, j = tags[i][2:], i + 1
            while j < len(tags) and tags[j] == f"I-{t}":
                j += 1
            out.add((t, i, j))
            i = j
        else:
            i += 1
    return out


def recompute(pred_file: Path) -> dict:
    """Per-type and micro/macro P/R/F1 from test_predictions.tsv, without seqeval."""
    gold_ents, pred_ents, sent, gold, pred = [], [], 0, [], []
    for line in pred_file.read_text(encoding="utf-8").splitlines() + [""]:
        if not line:
            if gold:
                gold_ents += [(sent, *e) for e in strict_entities(gold)]
                pred_ents += [(sent, *e) for e in strict_entities(pred)]
                sent, gold, pred = sent + 1, [], []
            continue
        _, g, p = line.split("\t")
        gold.append(g)
        pred.append(p)
    g, p = set(gold_ents), set(pred_ents)
    types = sorted({e[1] for e in g | p})  # seqeval reports every type seen in gold or predictions

    def prf(gs, ps):
        tp = len(gs & ps)
        pr = tp / len(ps) if ps else 0.0
        rc = tp / len(gs) if gs else 0.0
        return pr, rc, (2 * pr * rc / (pr + rc) if pr + rc else 0.0)

    per = {t: prf({e for e in g if e[1] == t}, {e for e in p if e[1] == t}) for t in types}
    macro = tuple(sum(v[i] for v in per.values()) / len(per) for i in range(3))
    return {"per": per, "micro": prf(g, p), "macro": macro, "support": Counter(e[1] for e in g), "n_pred": len(p)}


def test_score_strict_known():
    gold = [["B-DISO", "I-DISO", "O", "B-CHEM"], ["B-ANAT", "O"]]
    pred = [["B-DISO", "I-DISO", "O", "I-CHEM"], ["B-ANAT", "B-ANAT"]]  # stray I-CHEM is no entity
    rep = score(gold, pred)
    assert rep["DISO"]["f1-score"] == 1.0 and rep["CHEM"]["recall"] == 0.0
    assert rep["ANAT"]["precision"] == 0.5 and rep["ANAT"]["recall"] == 1.0
    assert rep["micro avg"]["precision"] == pytest.approx(2 / 3)
    assert rep["micro avg"]["recall"] == pytest.approx(2 / 3)


def test_encode_labels_first_piece_only(tiny_model):
    tok = load_model_tokenizer(tiny_model)
    s = Sentence(("Le", "cholécystectomie", "hépatiques", "."), ("O", "B-PROC", "I-PROC", "O"))
    labels = ["O", "B-PROC", "I-PROC"]
    [chunk] = encode(tok, [s], {l: i for i, l in enumerate(labels)}, 64)
    pieces = tok.backend.encode(list(s.words), is_pretokenized=True, add_special_tokens=False)
    assert chunk.input_ids[0] == tok.cls_id and chunk.input_ids[-1] == tok.sep_id
    assert chunk.input_ids[1:-1] == pieces.ids
    starts = [i + 1 for i, w in enumerate(pieces.word_ids) if i == 0 or pieces.word_ids[i - 1] != w]
    assert chunk.word_pos == starts
    assert [chunk.labels[p] for p in starts] == [0, 1, 2, 0]
    assert sum(l != -100 for l in chunk.labels) == 4


def test_encode_chunks_long_sentences_outside_entities(tiny_model):
    tok = load_model_tokenizer(tiny_model)
    words = tuple(["patient"] * 30 + ["insuffisance", "cardiaque"] + ["patient"] * 30)
    tags = tuple(["O"] * 30 + ["B-DISO", "I-DISO"] + ["O"] * 30)
    chunks = encode(tok, [Sentence(words, tags)], {"O": 0, "B-DISO": 1, "I-DISO": 2}, 33)
    assert all(len(c.input_ids) <= 33 for c in chunks)
    assert sum(c.n_words for c in chunks) == len(words)
    for c in chunks:  # no chunk starts on the I- word
        assert tags[c.first_word] != "I-DISO"


def test_finetune_quaero_subset_report_recomputed(tiny_model, shared_data, tmp_path):
    """Dev and test are drawn from the training sentences: a tiny model memorizes enough in a
    few epochs to predict entities, so the recomputation below checks real, non-zero counts."""
    full = load("quaero-medline", shared_data / "corpora")
    train = full.train[:48]
    ds = TaskData("quaero-subset", "ner", full.labels, train, train[:16], train[16:])
    cfg = NerConfig.from_options(epochs=8, lr=1e-2, batch_size=8, max_length=64, seed=0, patience=8, warmup=0.0)
    res = finetune_ner(tiny_model, ds, cfg, tmp_path / "ner", progress=False)
    saved = json.loads((tmp_path / "ner" / "results.json").read_text(encoding="utf-8"))
    assert saved["micro_f1"] == res.micro_f1 and saved["config"]["seed"] == 0
    assert res.best_epoch in range(1, 9) and len(res.history) >= 1
    again = recompute(tmp_path / "ner" / "test_predictions.tsv")
    rep = res.report
    assert again["micro"] == pytest.approx((rep["micro avg"]["precision"], rep["micro avg"]["recall"],
                                            rep["micro avg"]["f1-score"]))
    assert again["macro"] == pytest.approx((rep["macro avg"]["precision"], rep["macro avg"]["recall"],
                                            rep["macro avg"]["f1-score"]))
    for t, (p, r, f) in again["per"].items():
        assert (rep[t]["precision"], rep[t]["recall"], rep[t]["f1-score"]) == pytest.approx((p, r, f))
        assert rep[t]["support"] == again["support"][t]
    assert sum(again["support"].values()) == sum(len(s.entities) for s in ds.test)
    assert again["n_pred"] > 0 and rep["micro avg"]["f1-score"] > 0
    table = format_report(res)
    assert "micro avg" in table and "DISO" in table


def test_cls_report_known():
    from biotok_train.finetune.classify import cls_report

    acc, rep = cls_report(["1", "1", "2", "3"], ["1", "2", "2", "2"], ["1", "2", "3"])
    assert acc == 0.5
    assert rep["1"] == {"precision": 1.0, "recall": 0.5, "f1-score": pytest.approx(2 / 3), "support": 2}
    assert rep["2"]["precision"] == pytest.approx(1 / 3) and rep["3"]["f1-score"] == 0.0
    assert rep["macro avg"]["recall"] == pytest.approx(0.5)


def test_finetune_cls_frenchmedmcqa_subset(tiny_model, shared_data, tmp_path):
    from biotok_train.finetune.classify import cls_report, finetune_cls

    full = load("frenchmedmcqa-nbr", shared_data / "corpora")
    ds = TaskData("mcqa-subset", "classify", full.labels, full.train[::70], full.dev[::40], full.test[::40])
    res = finetune_cls(tiny_model, ds, NerConfig.from_options(epochs=1, lr=1e-3, batch_size=8, max_length=64), tmp_path / "cls",
                       progress=False)
    rows = [l.split("\t") for l in (tmp_path / "cls" / "test_predictions.tsv").read_text(encoding="utf-8").splitlines()]
    assert [r[1] for r in rows] == [e.label for e in ds.test]
    acc, rep = cls_report([r[1] for r in rows], [r[2] for r in rows], res.labels)
    assert res.accuracy == acc and res.macro_f1 == rep["macro avg"]["f1-score"]
    assert res.labels == ["1", "2", "3", "4", "5"] and res.steps == 4
