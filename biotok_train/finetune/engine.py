"""The one fine-tuning loop: :func:`fit` trains any :class:`Task` with the same recipe.

Epochs over shuffled training features, the shared optimizer policy (:mod:`biotok_train.optim`:
AdamW, no decay on biases and LayerNorm, linear warm-up and decay, gradient clipping at 1),
early stopping on the task's dev metric (dev loss breaks ties), the best dev state restored and
scored on test, then ``results.json`` + ``predictions.jsonl`` (+ ``test_predictions.tsv``)
written atomically.

A task (NER, sentence classification, ...) is a small object with hooks: which model head,
which labels, how to encode examples into features, collate features into a batch, decode the
model's logits into predictions, score them and write them. See :class:`Task`. Optional hooks:
``setup(tok, model)`` (e.g. add entity-marker tokens), ``loss(logits, labels)`` (a loss of the
task's own instead of the head's, e.g. binary decisions over multiple-choice options),
``tune(examples, features, logits, labels)`` (called with each dev pass's logits before decoding:
a decision threshold chosen on dev).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import random
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from biotok.errors import ConfigError
from biotok.io import finite_json
from biotok.output import atomic_directory, check_writable
from biotok.tokenizer import BiotokTokenizer
from biotok_train.config import FinetuneConfig
from biotok_train.finetune.batches import EVAL_BATCH_FACTOR, Progress, feature_length, length_grouped_order
from biotok_train.hf_models import best_device, check_model, frame_ids, load_model, load_model_tokenizer
from biotok_train.threads import Threads

log = logging.getLogger(__name__)

# Training losses are read back to the host every this many steps (each read waits for the device),
# or every step while a progress bar shows them.
LOSS_READ_EVERY = 50


@dataclass(frozen=True)
class Scores:
    """A task's scores on one split: headline ``metrics`` (floats) and the full ``report``."""

    metrics: dict[str, float]
    report: dict


class Task(Protocol):
    """What :func:`fit` needs from a task; one small class per task type (see ner.py, classify.py).

    ``examples`` are a dataset split's items (e.g. :class:`~biotok.datasets.bio.Sentence`);
    ``features`` whatever :meth:`encode` makes of them (several per example is fine);
    ``labels`` the label names of :meth:`labels` (index = class id).
    """

    name: str  # the task type, e.g. "ner"
    auto_model: str  # the transformers Auto class of its head, e.g. "AutoModelForTokenClassification"
    metric: str  # the key of Scores.metrics that early stopping maximizes on dev, e.g. "micro_f1"

    def labels(self, dataset: Any) -> list[str]:
        """The label names (their order gives the class ids)."""
        ...

    def model_kwargs(self, labels: list[str]) -> dict:
        """Extra ``from_pretrained`` arguments: num_labels, id2label, problem_type..."""
        ...

    def encode(self, tok: BiotokTokenizer, examples: Sequence, labels: list[str], max_length: int) -> list:
        """Examples to features, each fitting ``max_length`` pieces."""
        ...

    def collate(self, features: Sequence, pad_id: int) -> dict:
        """Features to a batch of CPU tensors: the model's keyword arguments, ``labels`` included."""
        ...

    def decode(self, examples: Sequence, features: Sequence, logits: list, labels: list[str]) -> list:
        """One prediction per example from the logits of each feature (CPU float tensors, one per feature)."""
        ...

    def score(self, examples: Sequence, predictions: list, labels: list[str]) -> Scores:
        """Scores of ``predictions`` against the examples' gold answers."""
        ...

    def prediction_rows(self, examples: Sequence, predictions: list) -> list[dict]:
        """predictions.jsonl: one object per example with its ``id``, ``gold`` and ``pred`` (the
        forms :mod:`biotok_train.scores` takes), so every number can be recomputed."""
        ...

    # optional: write_predictions(path, examples, predictions): test_predictions.tsv, one row per
    # example (or word), gold then predicted


def label_kwargs(labels: list[str]) -> dict:
    """``from_pretrained`` arguments that give a head one output per label, with readable names."""
    return {"num_labels": len(labels), "id2label": dict(enumerate(labels)),
            "label2id": {l: i for i, l in enumerate(labels)}}


@dataclass(frozen=True)
class FinetuneResult:
    """Test scores of the best dev epoch, and what produced them.

    The headline ``metrics`` are also attributes: ``result.micro_f1``, ``result.accuracy``...
    """

    model: str
    dataset: str
    task: str
    config: FinetuneConfig
    labels: list[str]
    best_epoch: int
    dev_metric: str  # the task's early-stopping metric
    dev_score: float  # its best value on dev
    steps: int
    seconds: float
    metrics: dict[str, float]  # on test
    report: dict  # on test: per label / type, and averages
    history: list[dict] = field(default_factory=list)
    # the test predictions, one per test example (not in results.json: predictions.jsonl has
    # them); an ablation pairs two models example by example with them
    predictions: list = field(default_factory=list, repr=False, compare=False)
    lr_search: list[dict] = field(default_factory=list)  # with a learning-rate grid: each lr's best dev score
    task_info: dict = field(default_factory=dict)  # the named task, its metric and data policy (bench, finetune)
    # the fine-tuned model, its tokenizer and curves (biotok_train.finetune.save.Trained): saved by
    # write_results, never in results.json
    trained: Any = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> float:
        if name == "metrics" or name.startswith("__"):
            raise AttributeError(name)
        try:
            return self.metrics[name]
        except KeyError as e:
            raise AttributeError(f"{type(self).__name__} has no attribute or metric {name!r}") from e

    def to_dict(self) -> dict:
        """results.json: the fields, plus each test metric and ``dev_<metric>`` at the top level."""
        d = asdict(dataclasses.replace(self, trained=None))  # asdict would deep-copy the model
        d.pop("predictions")
        d.pop("trained")
        d[f"dev_{self.dev_metric}"] = self.dev_score
        d.update(self.metrics)
        return d


def fit(
    model_path: str | os.PathLike[str],
    task: Task,
    dataset: Any,
    config: FinetuneConfig = FinetuneConfig(),
    out: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
    progress: bool = True,
    bar: bool | None = None,
) -> FinetuneResult:
    """Fine-tune ``model_path`` on ``dataset`` (``train``/``dev``/``test`` splits) for ``task``;
    with ``out``, write results.json, predictions.jsonl and test_predictions.tsv there (refused when
    it exists without ``force``). ``progress`` logs one line per epoch (logger ``biotok_train.finetune``);
    ``bar`` shows a progress bar over the optimizer steps on stderr (None: with ``progress``, when
    stderr is a terminal). ``config.train_fraction`` < 1 trains on a fixed subset (:func:`train_subset`);
    ``config.threads`` > 0 sets torch's CPU threads for the run; ``config.max_eval_examples`` > 0
    scores the first N dev and test examples only; ``config.lr_grid`` is not looked at
    here (:func:`biotok_train.finetune.run` loops over it)."""
    t0 = time.time()
    if config.max_eval_examples and hasattr(dataset, "evaluated_on"):
        dataset = dataset.evaluated_on(config.max_eval_examples)
    if out is not None:
        # never into the model nor the data it reads
        check_writable(out, force, [model_path, *getattr(dataset, "sources", ()), *getattr(dataset, "roots", ())], marker=MARKER)
    with Threads(config.threads):
        run = _Run.start(model_path, task, dataset, config, progress)
        with Progress(run.total, f"{dataset.name} seed {config.seed}", progress, bar) as shown:
            run.train(shown)
        result = run.finish(model_path, round(time.time() - t0, 2))
    if out is not None:
        write_results(result, task, dataset.test, result.predictions, out, force=force)
        if progress:
            log.info("wrote %s", Path(out) / "results.json")
    return result


@dataclass
class _Run:
    """One fine-tuning run's state: the loaded model and tokenizer, the encoded splits, the
    optimizer and its schedule, early stopping and the per-epoch history."""

    task: Task
    dataset: Any
    config: FinetuneConfig
    progress: bool
    tok: Any
    labels: list[str]
    model: Any
    max_len: int
    features: dict[str, list]  # train, dev, test features
    total: int  # optimizer steps planned
    optimizer: Any = None
    scheduler: Any = None
    step: int = 0
    history: list[dict] = field(default_factory=list)
    best: "_Best | None" = None
    trained: Any = None  # biotok_train.finetune.save.Trained: the model and the curves for TensorBoard

    @classmethod
    def start(cls, model_path, task: Task, dataset: Any, config: FinetuneConfig, progress: bool) -> "_Run":
        """Load, encode every split once, and build the optimizer for the planned steps."""
        from biotok_train.optim import build  # imports torch: not at module level

        tok, labels, model, max_len = _setup(model_path, task, dataset, config)
        train = list(dataset.train[: config.max_train_sentences] if config.max_train_sentences else dataset.train)
        train = train_subset(train, config.train_fraction)
        encode = _Encoded(task, tok, dataset, labels, max_len)
        features = {"train": encode("train", train, (config.max_train_sentences, config.train_fraction)),
                    "dev": encode("dev", dataset.dev), "test": encode("test", dataset.test)}
        if progress:
            log.info("%s: %d train / %d dev / %d test examples, %d labels", dataset.name, len(train),
                     len(dataset.dev), len(dataset.test), len(labels))
        total = math.ceil(len(features["train"]) / config.batch_size) * config.epochs
        total = min(total, config.max_steps) if config.max_steps else total
        run = cls(task, dataset, config, progress, tok, labels, model, max_len, features, total)
        run.optimizer, run.scheduler = build(model, config.optim, total)
        run.best = _Best(config.patience)
        from biotok_train.finetune.save import Trained

        run.trained = Trained(model, tok)
        return run

    def evaluate(self, split: str) -> tuple[list, float]:
        """Predictions and mean loss on ``split`` (its features encoded once, at the start). On
        dev a task with a ``tune`` hook (a threshold chosen on dev) first tunes on the logits."""
        examples, features = getattr(self.dataset, split), self.features[split]
        batch = self.config.batch_size * EVAL_BATCH_FACTOR
        logits, loss = _logits(self.model, self.task, features, frame_ids(self.tok)[2], batch, bf16=self.config.bf16)
        if split == "dev" and hasattr(self.task, "tune"):
            self.task.tune(examples, features, logits, self.labels)
        return self.task.decode(examples, features, logits, self.labels), loss

    def train(self, shown: Progress) -> None:
        """Epochs of length-grouped batches, dev scored after each, until early stopping or the step cap."""
        gen = random.Random(self.config.seed)
        lengths = [feature_length(self.task, f) for f in self.features["train"]]
        metric = self.task.metric
        for epoch in range(1, self.config.epochs + 1):
            order = length_grouped_order(lengths, self.config.batch_size, gen)
            losses = self._epoch(order, shown)
            dev_pred, dev_loss = self.evaluate("dev")
            dev = self.task.score(self.dataset.dev, dev_pred, self.labels).metrics[metric]
            self.history.append({"epoch": epoch, "steps": self.step, "train_loss": sum(losses) / max(1, len(losses)),
                                 "dev_loss": dev_loss, f"dev_{metric}": dev})
            self.trained.epoch(self.step, self.history[-1], len(losses) * self.config.batch_size)
            shown.dev(metric, dev)
            if self.progress:
                shown.line(f"epoch {epoch}: loss {self.history[-1]['train_loss']:.4f}  dev loss {dev_loss:.4f}  "
                           f"dev {metric} {dev:.4f}")
            if self.best.update(epoch, dev, dev_loss, self.model) or self.step >= self.total:
                break

    def _epoch(self, order: list[int], shown: Progress) -> list[float]:
        """One pass over the training features in ``order`` (stopping at the planned steps); the losses."""
        from biotok_train.optim import clip_and_step
        from biotok_train.precision import autocast  # lazy: imports torch

        self.model.train()
        device = next(self.model.parameters()).device
        pad = frame_ids(self.tok)[2]
        size, feats = self.config.batch_size, self.features["train"]
        max_norm = self.config.optim.max_grad_norm
        losses: list[float] = []
        pending: list[tuple] = []  # (step, loss on the device, lr): read back together, one sync
        read_every = 1 if shown.bar is not None else LOSS_READ_EVERY
        for b in range(0, len(order), size):
            if self.step >= self.total:
                break
            batch = self.task.collate([feats[i] for i in order[b : b + size]], pad)
            with autocast(device, self.config.bf16):
                loss, _ = _forward(self.model, self.task, _to(batch, device))
            loss.backward()
            clip_and_step(self.model, self.optimizer, self.scheduler, max_norm)
            self.step += 1
            pending.append((self.step, loss.detach(), self.scheduler.get_last_lr()[0]))
            if len(pending) >= read_every:
                losses += self._read_losses(pending, shown)
        return losses + self._read_losses(pending, shown)

    def _read_losses(self, pending: list[tuple], shown: Progress) -> list[float]:
        """The pending steps' losses read back to the host at once (one device sync instead of one
        per step, which on a GPU makes the CPU wait for every step before it launches the next),
        then logged in step order; ``pending`` is emptied."""
        import torch

        values = torch.stack([loss for _, loss, _ in pending]).float().tolist() if pending else []
        for (step, _, lr), value in zip(pending, values):
            self.trained.step(step, value, lr)
            shown.step(value)
        pending.clear()
        return values

    def finish(self, model_path, seconds: float) -> FinetuneResult:
        """The best dev state restored and scored on test."""
        self.best.restore(self.model)
        if getattr(self.task, "grid", ()):  # a threshold chosen on dev: tuned again on the best epoch's state
            self.evaluate("dev")
        test_pred, _ = self.evaluate("test")
        scores = self.task.score(self.dataset.test, test_pred, self.labels)
        return FinetuneResult(
            model=str(model_path), dataset=self.dataset.name, task=self.task.name, config=self.config,
            labels=self.labels, best_epoch=self.best.epoch, dev_metric=self.task.metric, dev_score=self.best.score,
            steps=self.step, seconds=seconds, metrics=scores.metrics, report=scores.report, history=self.history,
            predictions=test_pred, trained=self.trained,
        )


def _setup(model_path, task: Task, dataset: Any, config: FinetuneConfig):
    """Seed; load the tokenizer and the model with the task's head on the best device.

    Returns (tokenizer, labels, model, max pieces per input).
    """
    import torch

    random.seed(config.seed)
    torch.manual_seed(config.seed)
    if not dataset.train or not dataset.dev or not dataset.test:
        raise ConfigError(f"dataset {dataset.name}: train, dev and test must all be non-empty")
    tok = load_model_tokenizer(model_path)
    labels = task.labels(dataset)
    model = load_model(model_path, task.auto_model, "model", **task.model_kwargs(labels))
    check_model(model, tok, model_path)
    if getattr(model.config, "pad_token_id", None) is None:  # GPT-2 and kin: a sequence head finds the last
        model.config.pad_token_id = frame_ids(tok)[2]  # real token by the id batches are padded with
    max_len = min(config.max_length, getattr(model.config, "max_position_embeddings", config.max_length) - 2)
    if hasattr(task, "setup"):
        task.setup(tok, model)
    return tok, labels, model.to(best_device()), max_len


# Tokenized splits kept per process: an ablation's worker fine-tunes the same task on the same model
# for several seeds, and encoding is the larger part of a fine-tune's start-up (benchmarks/speed/
# finetune_startup.py: MORFITT 7-11 s of encoding on the 2-core CPU, against 0.5-1.3 s to load the model).
ENCODED_KEEP = 6
_ENCODED: "OrderedDict[tuple, tuple[Any, list, dict]]" = OrderedDict()


class _Encoded:
    """``task.encode`` of one run's splits, reused from an earlier run in this process when the same
    task (its class and settings, ``setup`` done), tokenizer (its fingerprint), dataset object and
    split, labels and length come again. What encode set on the task (e.g. the multiple-choice
    head's padding input) is set again on a hit; features are never modified after encoding."""

    def __init__(self, task: Task, tok, dataset: Any, labels: list[str], max_len: int) -> None:
        attrs = getattr(task, "__dict__", None)
        try:
            settings = None if attrs is None else repr(sorted((k, v) for k, v in attrs.items() if not callable(v)))
        except TypeError:  # unorderable attributes: no reuse
            settings = None
        self.task, self.tok, self.dataset, self.labels, self.max_len = task, tok, dataset, labels, max_len
        self.base = None if settings is None or " at 0x" in settings else (
            type(task).__module__, type(task).__qualname__, settings, tok.fingerprint, id(dataset), tuple(labels),
            max_len)

    def __call__(self, split: str, examples: Sequence, subset: tuple = ()) -> list:
        key = None if self.base is None else (*self.base, split, len(examples), subset)
        hit = _ENCODED.get(key) if key is not None else None
        if hit is not None and hit[0] is self.dataset:  # the same object, alive (held here): not a reused id
            _ENCODED.move_to_end(key)
            vars(self.task).update(hit[2])
            return hit[1]
        before = dict(vars(self.task))
        features = self.task.encode(self.tok, examples, self.labels, self.max_len)
        if key is not None:
            added = {k: v for k, v in vars(self.task).items() if k not in before or before[k] is not v}
            _ENCODED[key] = (self.dataset, features, added)
            while len(_ENCODED) > ENCODED_KEEP:
                _ENCODED.popitem(last=False)
        return features


TRAIN_SUBSET_SEED = 42


def train_subset(train: list, fraction: float) -> list:
    """The first ``int(fraction * len(train))`` examples (at least one) of ``train`` shuffled with
    a fixed seed (42, as DrBenchmark's few-shot runs), kept in their original order. The subset
    does not depend on the fine-tuning seed, and a smaller fraction's subset is inside a larger one's."""
    if fraction >= 1.0:
        return train
    order = list(range(len(train)))
    random.Random(TRAIN_SUBSET_SEED).shuffle(order)
    keep = sorted(order[: max(1, int(len(train) * fraction))])
    return [train[i] for i in keep]


class _Best:
    """Early stopping: keeps the best dev state (metric first, lower dev loss breaks ties)."""

    def __init__(self, patience: int) -> None:
        self.patience, self.bad = patience, 0
        self.epoch, self.score, self.loss = 0, -1.0, math.inf
        self.state: dict | None = None

    def update(self, epoch: int, score: float, loss: float, model) -> bool:
        """Record an epoch's dev score; True when training should stop (patience exhausted)."""
        if score > self.score or (score == self.score and loss < self.loss):
            self.epoch, self.score, self.loss, self.bad = epoch, score, loss, 0
            self.state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            return False
        self.bad += 1
        return self.bad >= self.patience

    def restore(self, model) -> None:
        if self.state is not None:
            model.load_state_dict(self.state)


def _to(batch: dict, device) -> dict:
    return {k: v.to(device) for k, v in batch.items()}


def _forward(model, task: Task, batch: dict):
    """(loss, logits) of a batch: the head's own loss, or the task's ``loss(logits, labels)``."""
    if hasattr(task, "loss"):
        labels = batch.pop("labels")
        logits = model(**batch).logits
        return task.loss(logits, labels), logits
    out = model(**batch)
    return out.loss, out.logits


def predict(model, task: Task, tok: BiotokTokenizer, examples: Sequence, labels: list[str], max_length: int,
            batch_size: int = 32 * EVAL_BATCH_FACTOR, bf16: bool = True) -> tuple[list, float]:
    """The task's predictions for ``examples`` and the mean loss over their features (``bf16``:
    autocast where supported, :mod:`biotok_train.precision`)."""
    features = task.encode(tok, examples, labels, max_length)
    return _evaluate(model, task, examples, features, labels, frame_ids(tok)[2], batch_size, bf16=bf16)


def _evaluate(model, task: Task, examples: Sequence, features: list, labels: list[str], pad: int,
              batch_size: int, bf16: bool = True) -> tuple[list, float]:
    """Predictions and mean loss (per feature) of :func:`_logits`, decoded by the task."""
    logits, loss = _logits(model, task, features, pad, batch_size, bf16)
    return task.decode(examples, features, logits, labels), loss


def _logits(model, task: Task, features: list, pad: int, batch_size: int, bf16: bool = True) -> tuple[list, float]:
    """Logits (one CPU float tensor per feature) and mean loss (per feature) under
    ``torch.inference_mode``, in batches of similar lengths (sorted, longest first; padding to each
    batch's longest only), the logits put back in the features' order for :meth:`Task.decode`."""
    import torch

    from biotok_train.precision import autocast  # lazy: imports torch

    device = next(model.parameters()).device
    model.eval()
    order = sorted(range(len(features)), key=lambda i: -feature_length(task, features[i]))
    logits: list = [None] * len(features)
    total = 0.0
    with torch.inference_mode():
        for b in range(0, len(order), batch_size):
            sel = order[b : b + batch_size]
            with autocast(device, bf16):
                loss, out = _forward(model, task, _to(task.collate([features[i] for i in sel], pad), device))
            total += float(loss) * len(sel)
            for i, row in zip(sel, out.float().cpu().unbind(0)):
                logits[i] = row
    return logits, total / max(1, len(features))


MARKER = "results.json"  # the file that makes a folder fine-tuning results (--force replaces only those)


def write_results(result: FinetuneResult, task: Task, test: Sequence, predictions: list,
                  out: str | os.PathLike[str], *, force: bool = False) -> None:
    """results.json, predictions.jsonl (every test prediction with its example's id) and the task's
    test_predictions.tsv where it has one, written together into ``out`` (atomically)."""
    with atomic_directory(out, force, [result.model], marker=MARKER) as tmp:
        (tmp / MARKER).write_text(json.dumps(finite_json(result.to_dict()), indent=2, ensure_ascii=False,
                                             allow_nan=False) + "\n", encoding="utf-8")
        with open(tmp / "predictions.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for row in task.prediction_rows(test, predictions):
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        if hasattr(task, "write_predictions"):
            task.write_predictions(tmp / "test_predictions.tsv", test, predictions)
        from biotok_train.finetune.save import write_outputs

        write_outputs(tmp, result, out)  # the model, TensorBoard events, README.md


__all__ = ["FinetuneConfig", "FinetuneResult", "Scores", "Task", "fit", "label_kwargs", "predict", "train_subset",
           "write_results"]
