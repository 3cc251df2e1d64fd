"""The fine-tuning engine's batching and run options: length-grouped training order (as
transformers' group_by_length sampler), padding to each batch's longest row only, evaluation in
length-sorted batches giving the same predictions as one example at a time, ``threads``, and the
progress (a bar on a terminal, lines off it with ``bar=True``, nothing by default off a terminal)."""

from __future__ import annotations

import dataclasses
import random
import shutil
from pathlib import Path

import pytest

from biotok.datasets.bio import Sentence
from biotok.errors import ConfigError
from biotok_train.config import FinetuneConfig, OptimConfig
from biotok_train.finetune.batches import MEGA_BATCHES, length_grouped_order, pad_rows

FAST = FinetuneConfig(epochs=2, batch_size=4, max_length=48, patience=2, optim=OptimConfig(lr=1e-3, warmup=0.0))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, tiny_wordpiece) -> Path:
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from biotok_train.hf_models import load_model_tokenizer

    out = tmp_path_factory.mktemp("engine") / "tiny-bert"
    shutil.copytree(tiny_wordpiece, out)
    tok = load_model_tokenizer(out)
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=64, max_position_embeddings=130,
                               pad_token_id=tok.pad_id)).save_pretrained(out)
    return out


def _dataset():
    from biotok_train.tasks.examples import TaskData

    words = "le patient présente une fièvre aiguë depuis trois jours et une toux sèche".split()
    sents = []
    for i in range(30):
        n = 3 + i % 9
        tags = ["O"] * n
        if n > 4:
            tags[4] = "B-DISO"
        sents.append(Sentence(tuple(words[:n]), tuple(tags), f"s{i}"))
    return TaskData("tiny-ner", "ner", ("DISO",), tuple(sents[:20]), tuple(sents[20:25]), tuple(sents[25:]))


def test_length_grouped_order_is_the_group_by_length_recipe():
    rng = random.Random(1)
    lengths = [rng.randint(1, 128) for _ in range(1000)]
    order = length_grouped_order(lengths, 16, random.Random(0))
    assert sorted(order) == list(range(1000))  # a permutation: every example once per epoch
    assert order == length_grouped_order(lengths, 16, random.Random(0))  # same seed, same order
    assert order != length_grouped_order(lengths, 16, random.Random(1))
    assert lengths[order[0]] == max(lengths)  # the longest batch first (fails early if too long)
    size = min(1000 // (16 * 4), MEGA_BATCHES) * 16  # 15 batches per mega-batch here
    for m in range(0, 1000, size):
        mega = [lengths[i] for i in order[m : m + size]]
        rest = mega[1:] if m == 0 else mega  # the swapped-in longest one
        assert rest == sorted(rest, reverse=True)
    # padding: grouped batches waste far fewer positions than shuffled ones
    def padded(o):
        return sum(len(o[b : b + 16]) * max(lengths[i] for i in o[b : b + 16]) for b in range(0, len(o), 16))

    shuffled = list(range(1000))
    random.Random(0).shuffle(shuffled)
    assert padded(order) < 0.7 * padded(shuffled)


def test_length_grouped_order_small_sets():
    assert length_grouped_order([], 4, random.Random(0)) == []
    assert sorted(length_grouped_order([3, 1, 2], 16, random.Random(0))) == [0, 1, 2]


def test_pad_rows_pads_to_the_batch_longest_only():
    ids, mask = pad_rows([[5, 6, 7], [8]], 0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]


def test_threads_option_validated_and_restored(tiny_model):
    import torch

    from biotok_train.finetune import finetune

    with pytest.raises(ConfigError, match="threads"):
        FinetuneConfig(threads=-1)
    before = torch.get_num_threads()
    res = finetune(tiny_model, _dataset(), FinetuneConfig(**{**FAST.__dict__, "threads": 1}), progress=False)
    assert res.config.threads == 1 and torch.get_num_threads() == before


def test_batched_evaluation_matches_one_at_a_time(tiny_model):
    """Length-sorted evaluation batches (padded to their longest row) predict as unpadded single examples."""
    from biotok_train.finetune import make_head
    from biotok_train.finetune.engine import predict
    from biotok_train.hf_models import load_model, load_model_tokenizer

    data = _dataset()
    head = make_head("ner", FAST)
    labels = head.labels(data)
    tok = load_model_tokenizer(tiny_model)
    model = load_model(tiny_model, head.auto_model, **head.model_kwargs(labels))
    examples = list(data.train)
    batched, loss = predict(model, head, tok, examples, labels, 48, batch_size=8)
    single = [predict(model, head, tok, [e], labels, 48, batch_size=1)[0][0] for e in examples]
    assert batched == single and loss > 0


def test_progress_bar_on_demand_and_off_without_terminal(tiny_model, capsys):
    from biotok_train.finetune import finetune

    cfg = FinetuneConfig(**{**FAST.__dict__, "epochs": 1})
    finetune(tiny_model, _dataset(), cfg, progress=True)  # stderr is captured: not a terminal
    assert "step" not in capsys.readouterr().err
    finetune(tiny_model, _dataset(), cfg, progress=True, bar=True)
    err = capsys.readouterr().err
    assert "5/5" in err and "step" in err and "dev" in err  # 20 examples / batch 4, the dev score shown


def test_cli_threads_and_no_progress(tiny_model, tmp_path):
    import json

    from click.testing import CliRunner

    from biotok_train.cli import main

    d = tmp_path / "bio"
    d.mkdir()
    data = _dataset()
    for name, split in (("train", data.train), ("dev", data.dev), ("test", data.test)):
        (d / f"{name}.txt").write_text("".join("".join(f"{w} {t}\n" for w, t in zip(s.words, s.tags)) + "\n"
                                               for s in split), encoding="utf-8")
    res = CliRunner().invoke(main, ["finetune", str(tiny_model), "--task-type", "ner", "--train", str(d / "train.txt"),
                                    "--dev", str(d / "dev.txt"), "--test", str(d / "test.txt"), "--epochs", "1",
                                    "--threads", "1", "--no-progress", "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["config"]["threads"] == 1


def test_entity_report_and_f1_are_seqevals_strict_numbers():
    """The one-pass IOB2 entity reader gives seqeval's strict report and F1, float for float (and
    key order), on random tag sequences with stray I-, untyped and hyphenated types."""
    import json
    import warnings

    from seqeval.metrics import classification_report, f1_score, precision_score, recall_score
    from seqeval.scheme import BILOU, IOB2

    from biotok_train.scores import entity_f1, entity_report

    rng = random.Random(0)
    tags = ["O", "O", "O", "B-A", "I-A", "B-B", "I-B", "B-Long-Type", "I-Long-Type", "I-A", "B", "I"]
    kw = dict(mode="strict", zero_division=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy: mean of empty slice when no entity at all
        for _ in range(200):
            gold = [[rng.choice(tags) for _ in range(rng.randint(0, 12))] for _ in range(rng.randint(1, 20))]
            pred = [[rng.choice(tags) if rng.random() < 0.4 else t for t in s] for s in gold]
            ref = classification_report(gold, pred, scheme=IOB2, output_dict=True, **kw)
            # seqeval's average over no entity type is NaN; ours is 0 (results.json stays strict JSON, issue 33)
            ref = {k: {m: (int(v) if m == "support" else 0.0 if v != v else float(v)) for m, v in d.items()}
                   for k, d in ref.items()}
            assert json.dumps(entity_report(gold, pred)) == json.dumps(ref)
            e = entity_f1(gold, pred)
            assert (e.value, e.details["precision"], e.details["recall"]) == (
                float(f1_score(gold, pred, scheme=IOB2, **kw)), float(precision_score(gold, pred, scheme=IOB2, **kw)),
                float(recall_score(gold, pred, scheme=IOB2, **kw)))
        bilou = ["O", "B-A", "I-A", "L-A", "U-A", "U-B", "B-B", "L-B"]
        for _ in range(50):
            gold = [[rng.choice(bilou) for _ in range(rng.randint(1, 10))] for _ in range(rng.randint(1, 10))]
            pred = [[rng.choice(bilou) if rng.random() < 0.4 else t for t in s] for s in gold]
            assert entity_f1(gold, pred, "bioul").value == float(f1_score(gold, pred, scheme=BILOU, **kw))


def test_training_losses_are_read_back_in_batches_not_every_step(tiny_model, monkeypatch):
    """Without a bar the loop reads the losses of LOSS_READ_EVERY steps at once (on a GPU, each
    read waits for the device); every step's loss is still logged, in order, and the epoch means
    are those losses' means."""
    import torch

    from biotok_train.finetune import engine, finetune

    reads = []
    real = torch.Tensor.tolist
    monkeypatch.setattr(engine, "LOSS_READ_EVERY", 3)
    monkeypatch.setattr(torch.Tensor, "tolist", lambda t: reads.append(t.numel()) or real(t))
    r = finetune(tiny_model, _dataset(), FAST, progress=False)
    train = [(step, v["loss"]) for step, v, prefix in r.trained.scalars if prefix == "train/"]
    assert [s for s, _ in train] == list(range(1, r.steps + 1))  # every step logged, in order
    per_epoch = r.steps // len(r.history)
    assert reads[:2] == [3, 2]  # 5 steps an epoch (20 examples / batch 4): 3, then the epoch's last 2
    means = [sum(v for _, v in train[i * per_epoch:(i + 1) * per_epoch]) / per_epoch for i in range(len(r.history))]
    assert means == pytest.approx([h["train_loss"] for h in r.history], rel=1e-12)


def test_a_tasks_splits_are_encoded_once_per_process_and_reused_for_the_next_seed(tiny_model, monkeypatch):
    """A second seed on the same model, task and dataset reuses the encoded splits (and what encode
    set on the task); the results are those of encoding again."""
    from biotok_train.finetune import engine, make_head
    from biotok_train.finetune.ner import NerTask

    calls = []
    real = NerTask.encode

    def encode(self, tok, examples, labels, max_length):
        calls.append(len(examples))
        self.encoded_with = tok.fingerprint  # a side effect a later hook could read (as the MCQ head's filler)
        return real(self, tok, examples, labels, max_length)

    monkeypatch.setattr(NerTask, "encode", encode)
    monkeypatch.setattr(engine, "_ENCODED", engine.OrderedDict())
    data = _dataset()
    cfg = dataclasses.replace(FAST, epochs=1)
    first = engine.fit(tiny_model, make_head("ner", cfg), data, cfg, progress=False)
    assert calls == [20, 5, 5]
    head = make_head("ner", dataclasses.replace(cfg, seed=1))
    cached = engine.fit(tiny_model, head, data, dataclasses.replace(cfg, seed=1), progress=False)
    assert calls == [20, 5, 5] and head.encoded_with  # reused, and encode's attribute set on the new head
    engine._ENCODED.clear()
    fresh = engine.fit(tiny_model, make_head("ner", cfg), data, dataclasses.replace(cfg, seed=1), progress=False)
    assert len(calls) == 6
    assert (cached.metrics, cached.predictions, cached.history) == (fresh.metrics, fresh.predictions, fresh.history)
    assert first.history != [] and len(engine._ENCODED) == 3
    # another dataset object, another scheme or another max length: encoded again
    engine.fit(tiny_model, make_head("ner", cfg), _dataset(), cfg, progress=False)
    engine.fit(tiny_model, make_head("ner", dataclasses.replace(cfg, scheme="io")), data,
               dataclasses.replace(cfg, scheme="io"), progress=False)
    engine.fit(tiny_model, make_head("ner", cfg), data, dataclasses.replace(cfg, max_length=24), progress=False)
    assert len(calls) == 15 and len(engine._ENCODED) == engine.ENCODED_KEEP


def test_max_eval_examples_scores_the_first_n_dev_and_test_examples(tiny_model):
    """A dry run's cap: the fine-tune is scored on the first N dev and test examples, exactly as on a
    task whose dev and test hold only those (0 and a cap above the sizes change nothing)."""
    from biotok_train.finetune import engine, make_head

    data = _dataset()
    cfg = dataclasses.replace(FAST, epochs=1)
    capped = engine.fit(tiny_model, make_head("ner", cfg), data, dataclasses.replace(cfg, max_eval_examples=3),
                        progress=False)
    cut = dataclasses.replace(data, dev=data.dev[:3], test=data.test[:3])
    plain = engine.fit(tiny_model, make_head("ner", cfg), cut, cfg, progress=False)
    assert len(capped.predictions) == 3 and capped.predictions == plain.predictions
    assert (capped.metrics, capped.history) == (plain.metrics, plain.history)
    assert data.evaluated_on(0) is data and data.evaluated_on(5) is data  # dev and test hold 5: nothing cut
    assert data.evaluated_on(2).sizes() == {"train": 20, "dev": 2, "test": 2}
    with pytest.raises(ConfigError, match="--max-eval-examples must be at least 0"):
        FinetuneConfig(max_eval_examples=-1)
