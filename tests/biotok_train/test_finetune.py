"""Every task type end to end on a tiny BERT built here (no network), each number recomputed from
predictions.jsonl; and the task options: tagging schemes, relation markers, lr grid, train
fraction, thresholds."""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
from pathlib import Path

import pytest

from biotok.errors import ConfigError
from biotok_train.config import FinetuneConfig, OptimConfig
from biotok.datasets.bio import Sentence
from biotok_train.tasks.examples import (
    ClassifyExample, MCQExample, MultiLabelExample, PairExample, RelationExample, TaskData, YesNoExample,
)
from biotok_train.tasks import TaskSpec, plain_spec
from biotok_train.scores import compute
from biotok_train.finetune import HEADS, finetune, format_result, make_head
from biotok_train.finetune.engine import train_subset
from biotok_train.finetune.ner import from_scheme, to_scheme

FAST = FinetuneConfig(epochs=2, batch_size=4, max_length=48, patience=2, optim=OptimConfig(lr=1e-3, warmup=0.0))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, tiny_wordpiece) -> Path:
    """A 2-layer, hidden-32 BertForMaskedLM built from a config, saved with the tokenizer."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from biotok_train.hf_models import load_model_tokenizer

    out = tmp_path_factory.mktemp("heads") / "tiny-bert"
    shutil.copytree(tiny_wordpiece, out)
    tok = load_model_tokenizer(out)
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=64, max_position_embeddings=130,
                               pad_token_id=tok.pad_id)).save_pretrained(out)
    return out


def _data(task_type: str, labels: tuple, make) -> TaskData:
    ex = [make(i) for i in range(16)]
    return TaskData(f"tiny-{task_type}", task_type, labels, tuple(ex[:10]), tuple(ex[10:13]), tuple(ex[13:]))


_W = "le patient présente une fièvre aiguë depuis trois jours".split()
SENT = "aspirine inhibe la cox chez le patient ."
DATA = {
    "ner": lambda: _data("ner", ("DISO",), lambda i: Sentence(
        tuple(_W), ("O",) * 4 + (("B-DISO", "I-DISO") if i % 2 else ("B-DISO", "O")) + ("O",) * 3, f"s{i}")),
    "classify": lambda: _data("classify", ("neg", "pos"), lambda i: ClassifyExample(
        f"c{i}", "fièvre aiguë" if i % 2 else "toux sèche", ("neg", "pos")[i % 2])),
    "relation": lambda: _data("relation", ("false", "CPR:3"), lambda i: RelationExample(
        f"r{i}", "@CHEMICAL$ inhibe la @GENE$ chez le patient ." if i % 2 else "@CHEMICAL$ et la @GENE$ .",
        ("false", "CPR:3")[i % 2], sentence=SENT, spans=((0, 8, "CHEMICAL"), (19, 22, "GENE")))),
    "multilabel": lambda: _data("multilabel", ("x", "y"), lambda i: MultiLabelExample(
        f"m{i}", "fièvre" if i % 2 else "toux", ("x",) if i % 2 else ("x", "y"), group=str(i // 2))),
    "pair-regression": lambda: _data("pair-regression", (), lambda i: PairExample(
        f"p{i}", "fièvre aiguë", "fièvre" if i % 2 else "toux", float(i % 3))),
    "yesno-qa": lambda: _data("yesno-qa", ("yes", "no", "maybe"), lambda i: YesNoExample(
        f"y{i}", "fièvre ?", "le patient a une fièvre" if i % 2 else "non", ("yes", "no")[i % 2])),
    "mcq": lambda: _data("mcq", (), lambda i: MCQExample(
        f"q{i}", "quel symptôme ?", ("fièvre", "toux", "douleur", "rien", "tout"), (0,) if i % 2 else (1, 2))),
}


def test_every_task_type_has_a_head():
    from biotok_train.tasks.examples import TASK_TYPES
    from biotok_train.tasks import TASKS

    assert set(HEADS) == set(TASK_TYPES) == set(DATA)
    assert all(spec.task_type in HEADS for spec in TASKS.values())
    with pytest.raises(ConfigError, match="unknown task type 'translation'"):
        make_head("translation")


@pytest.mark.parametrize("task_type", sorted(DATA))
def test_task_type_end_to_end_recomputed(task_type, tiny_model, tmp_path):
    data = DATA[task_type]()
    spec = plain_spec(data)
    res = finetune(tiny_model, data, FAST, tmp_path / "out", progress=False)
    out = tmp_path / "out"
    assert res.task == task_type and res.dev_metric == spec.metric and 1 <= res.best_epoch <= 2
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved[spec.metric] == res.metrics[spec.metric] and saved["task_info"]["metric"] == spec.metric
    rows = [json.loads(l) for l in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [getattr(e, "id", "") or e.source for e in data.test]
    opts = dict(spec.metric_options)
    if spec.metric == "hoc_f1":
        opts["groups"] = [r["group"] for r in rows]
    again = compute(spec.metric, [r["gold"] for r in rows], [r["pred"] for r in rows], **opts)
    assert again.value == pytest.approx(res.metrics[spec.metric])
    assert spec.metric in format_result(res)


def test_named_metric_drives_early_stopping_and_hoc_groups(tiny_model):
    data = DATA["multilabel"]()
    spec = TaskSpec("tiny-hoc", None, "multilabel", "hoc_f1", lambda c, k: data, ("x", "y"), "classification",
                    (("labels", ("x", "y")),))
    res = finetune(tiny_model, spec, dataclasses.replace(FAST, epochs=3, patience=3), progress=False)
    assert res.dev_metric == "hoc_f1"
    # the kept epoch is the one with the best dev hoc_f1 (ties: the lower dev loss, then the earlier)
    best = max(res.history, key=lambda h: (h["dev_hoc_f1"], -h["dev_loss"]))
    assert (res.best_epoch, res.dev_score) == (best["epoch"], best["dev_hoc_f1"])
    assert all(0.0 <= h["dev_hoc_f1"] <= 1.0 for h in res.history) and len(res.history) == 3
    groups = [e.group for e in data.test]
    assert res.hoc_f1 == compute("hoc_f1", [e.labels for e in data.test], res.predictions, groups=groups,
                                 labels=("x", "y")).value


def test_scheme_round_trip_and_io_merges_adjacent_entities():
    tags = ["B-A", "I-A", "O", "B-A", "B-A", "I-A", "I-A", "B-B", "O"]
    assert to_scheme(tags, "bioul") == ["B-A", "L-A", "O", "U-A", "B-A", "I-A", "L-A", "U-B", "O"]
    assert from_scheme(to_scheme(tags, "bioul"), "bioul") == tags
    assert to_scheme(tags, "io") == ["I-A", "I-A", "O", "I-A", "I-A", "I-A", "I-A", "I-B", "O"]
    assert from_scheme(to_scheme(tags, "io"), "io") == ["B-A", "I-A", "O", "B-A", "I-A", "I-A", "I-A", "B-B", "O"]


def test_bioul_decoding_is_seqeval_strict():
    from seqeval.scheme import BILOU, Entities

    rng = random.Random(0)
    vocab = ["O", "B-A", "I-A", "L-A", "U-A", "B-B", "L-B", "U-B", "I-B"]
    for _ in range(300):
        seq = [rng.choice(vocab) for _ in range(rng.randint(1, 8))]
        ours = {(t, s, e) for t, s, e in Sentence(tuple("w" * len(seq)), tuple(from_scheme(seq, "bioul"))).entities}
        theirs = {(e.tag, e.start, e.end) for e in Entities([seq], BILOU).entities[0]}
        assert ours == theirs, seq


@pytest.mark.parametrize("scheme", ["bioul", "io"])
def test_ner_schemes_train_on_their_tags_and_predict_iob2(scheme, tiny_model):
    data = DATA["ner"]()
    cfg = FinetuneConfig(**{**FAST.__dict__, "scheme": scheme})
    res = finetune(tiny_model, data, cfg, progress=False)
    assert res.labels == {"bioul": ["O", "B-DISO", "I-DISO", "L-DISO", "U-DISO"], "io": ["O", "I-DISO"]}[scheme]
    assert all(t == "O" or t[:2] in ("B-", "I-") for p in res.predictions for t in p)
    assert res.task_info["scheme"] == scheme


def test_relation_markers_add_tokens_and_grow_embeddings(tiny_model):
    from biotok_train.finetune.relation import MARKERS, add_markers
    from biotok_train.hf_models import load_model, load_model_tokenizer

    tok = load_model_tokenizer(tiny_model)
    model = load_model(tiny_model, "AutoModelForSequenceClassification", num_labels=2)
    before = tok.vocab_size
    assert add_markers(tok, model) == 4
    assert model.get_input_embeddings().num_embeddings == before + 4
    ex = DATA["relation"]().train[1]
    assert ex.marked() == "[E1] aspirine [/E1] inhibe la [E2] cox [/E2] chez le patient ."
    ids = tok.encode(ex.marked()).ids
    assert all(tok.token_to_id(m) in ids for m in MARKERS)


def test_relation_markers_need_spans(tiny_model):
    data = DATA["relation"]()
    masked = TaskData(data.name, "relation", data.labels,
                      *(tuple(RelationExample(e.id, e.text, e.label, "f.tsv:3") for e in split)
                        for split in (data.train, data.dev, data.test)))
    cfg = FinetuneConfig(**{**FAST.__dict__, "relation_input": "markers"})
    with pytest.raises(ConfigError, match="--relation-input markers needs"):
        finetune(tiny_model, masked, cfg, progress=False)


def test_lr_grid_keeps_the_best_dev_run(tiny_model, tmp_path):
    data = DATA["classify"]()
    cfg = FinetuneConfig(**{**FAST.__dict__, "lr_grid": (1e-3, 1e-5)})
    res = finetune(tiny_model, data, cfg, tmp_path / "grid", progress=False)
    assert [r["lr"] for r in res.lr_search] == [1e-3, 1e-5]
    best = max(res.lr_search, key=lambda r: r["dev_accuracy"])
    assert res.config.optim.lr == best["lr"] and res.dev_score == best["dev_accuracy"]
    saved = json.loads((tmp_path / "grid" / "results.json").read_text(encoding="utf-8"))
    assert saved["lr_search"] == res.lr_search


def test_train_fraction_subset_is_fixed_and_nested():
    items = list(range(100))
    a, b = train_subset(items, 0.1), train_subset(items, 0.5)
    assert len(a) == 10 and len(b) == 50 and set(a) <= set(b) and a == sorted(a)
    assert train_subset(items, 0.1) == a and train_subset(items, 1.0) is items
    assert train_subset([7], 0.01) == [7]


def test_train_fraction_trains_on_fewer_examples(tiny_model):
    data = DATA["classify"]()
    cfg = FinetuneConfig(**{**FAST.__dict__, "train_fraction": 0.4, "epochs": 1})
    res = finetune(tiny_model, data, cfg, progress=False)
    assert res.steps == 1 and res.task_info["train_fraction"] == 0.4  # 4 of 10 examples, batch 4


def test_thresholds_of_task_config_and_default():
    morfitt = TaskSpec("m", None, "multilabel", "weighted_f1_multilabel", lambda c, k: None, ("a", "b"),
                       "classification", (("labels", ("a", "b")),), threshold=0.7)
    assert make_head("multilabel", FinetuneConfig(), morfitt).threshold == 0.7
    assert make_head("multilabel", FinetuneConfig(threshold=0.3), morfitt).threshold == 0.3
    assert make_head("mcq").threshold == 0.5


def test_mcq_decoding_always_answers():
    import torch

    head = make_head("mcq")
    ex = [MCQExample("1", "q", ("a", "b", "c"), (0,)), MCQExample("2", "q", ("a", "b"), (1,))]
    logits = [torch.tensor([-3.0, -1.0, -2.0, 9.0]), torch.tensor([2.0, 0.5, 0.0, 0.0])]
    assert head.decode(ex, [], logits, ["right"]) == [(1,), (0, 1)]  # padded 4th choice ignored


def test_config_validation():
    for kwargs, needle in [({"scheme": "bilou"}, "--scheme"), ({"relation_input": "tags"}, "--relation-input"),
                           ({"layer_decay": 0.0}, "--layer-decay"), ({"lr_grid": (1e-5, -1.0)}, "--lr-grid"),
                           ({"train_fraction": 0.0}, "--train-fraction"), ({"threshold": 1.0}, "--threshold")]:
        with pytest.raises(ConfigError, match=needle):
            FinetuneConfig.from_options(**kwargs)  # the flat options of the command line (layer_decay: optim's)


def test_same_seed_same_predictions_bytes(tiny_model, tmp_path):
    data = DATA["mcq"]()
    for name in ("a", "b"):
        finetune(tiny_model, data, FAST, tmp_path / name, progress=False)
    assert (tmp_path / "a" / "predictions.jsonl").read_bytes() == (tmp_path / "b" / "predictions.jsonl").read_bytes()
