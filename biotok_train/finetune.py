"""Token classification (NER) fine-tuning and seqeval scoring, as in the AliBERT paper's Table 4.

Words come from :mod:`biotok_train.readers` (word-level IOB2). Each word is tokenized on its own
(``is_pretokenized``), the label goes on its first piece and the other pieces get -100. Training
stops early on the dev micro-F1 (dev loss breaks ties); the best dev state is scored on test with seqeval, entity level,
strict IOB2 mode: precision, recall, F1 per type, micro and macro averages.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from biotok.errors import BiotokError, ConfigError, TokenizerLoadError
from biotok.tokenizer import BiotokTokenizer
from biotok_train.readers import NerDataset, Sentence


# --- tokenizer and model loading ---------------------------------------------------------------
def load_model_tokenizer(model: str | os.PathLike[str]) -> BiotokTokenizer:
    """The tokenizer of a model directory: biotok's loader first, then ``AutoTokenizer``.

    Truncation and padding saved in tokenizer.json are switched off: callers cut and pad.
    """
    tok = _load_tokenizer(model)
    tok.backend.no_truncation()
    tok.backend.no_padding()
    return tok


def _load_tokenizer(model: str | os.PathLike[str]) -> BiotokTokenizer:
    from biotok.tokenizer import load

    m = str(model)
    if not Path(m).exists() and (m.startswith((".", "/", "~")) or m.count("/") > 1):  # a path, not a hub id
        raise TokenizerLoadError(f"model not found: {m} (a directory with config.json and a tokenizer)")
    try:
        return load(model)
    except TokenizerLoadError:
        pass
    try:
        from transformers import AutoTokenizer

        hf = AutoTokenizer.from_pretrained(m)
    except Exception as e:  # transformers raises OSError/ValueError/... for unknown models
        raise TokenizerLoadError(f"cannot load a tokenizer from {m}: {str(e).splitlines()[0]}") from None
    if not getattr(hf, "is_fast", False):
        raise TokenizerLoadError(f"{m}: a fast tokenizer (tokenizer.json) is needed for word ids")
    specials = {r: getattr(hf, f"{r}_token", None) for r in ("pad", "unk", "cls", "sep", "mask", "bos", "eos")}
    return BiotokTokenizer(hf.backend_tokenizer, name=Path(m).name, source=m, specials=specials)


@contextlib.contextmanager
def quiet_transformers():
    """Silence transformers' loading bars and "newly initialized weights" notes (expected here)."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def frame_ids(tok: BiotokTokenizer) -> tuple[int, int, int]:
    """(start, end, pad) ids that frame a sequence: [CLS] ... [SEP] or <s> ... </s>."""
    start = tok.cls_id if tok.cls_id is not None else tok.special_id("bos")
    end = tok.sep_id if tok.sep_id is not None else tok.special_id("eos")
    if start is None or end is None:
        raise TokenizerLoadError(f"{tok.name}: no [CLS]/[SEP] (or <s>/</s>) special tokens")
    pad = tok.pad_id if tok.pad_id is not None else end
    return start, end, pad


# --- configuration and results ---------------------------------------------------------------
@dataclass(frozen=True)
class NerConfig:
    """Fine-tuning recipe; ``max_steps`` > 0 caps the optimizer steps (all epochs together)."""

    epochs: int = 3
    lr: float = 5e-5
    seed: int = 0
    batch_size: int = 16
    max_steps: int = 0
    max_length: int = 256
    patience: int = 2
    warmup: float = 0.1
    weight_decay: float = 0.01
    max_train_sentences: int = 0  # > 0: use only the first N training sentences (smoke tests)

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1 or self.lr <= 0 or self.max_length < 8:
            raise ConfigError("ner: epochs and batch size must be >= 1, lr > 0, max length >= 8")


@dataclass(frozen=True)
class NerResult:
    """Scores on test (seqeval strict IOB2) of the best dev epoch, and what produced them."""

    model: str
    dataset: str
    config: NerConfig
    labels: list[str]
    best_epoch: int
    dev_micro_f1: float
    steps: int
    seconds: float
    report: dict  # {type | 'micro avg' | 'macro avg' | 'weighted avg': {precision, recall, f1-score, support}}
    history: list[dict] = field(default_factory=list)

    @property
    def micro_f1(self) -> float:
        return float(self.report["micro avg"]["f1-score"])

    @property
    def macro_f1(self) -> float:
        return float(self.report["macro avg"]["f1-score"])

    def to_dict(self) -> dict:
        d = asdict(self)
        d["micro_f1"], d["macro_f1"] = self.micro_f1, self.macro_f1
        return d


# --- encoding ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Chunk:
    sentence: int  # index of the sentence it comes from
    first_word: int  # index of its first word in that sentence
    n_words: int
    input_ids: list[int]
    labels: list[int]  # -100 except on the first piece of each word
    word_pos: list[int]  # position of each word's first piece (-1: the word has no piece)


def encode(
    tok: BiotokTokenizer, sentences: Sequence[Sentence], label2id: dict[str, int], max_length: int
) -> list[_Chunk]:
    """Sentences to model inputs, cut at word boundaries (not inside an entity when possible)
    so every chunk fits ``max_length`` pieces including [CLS]/[SEP]."""
    start_id, end_id, _ = frame_ids(tok)
    budget = max_length - 2
    chunks: list[_Chunk] = []
    encs = tok.backend.encode_batch([list(s.words) for s in sentences], is_pretokenized=True, add_special_tokens=False)
    for si, (s, enc) in enumerate(zip(sentences, encs)):
        pieces: list[list[int]] = [[] for _ in s.words]
        for pid, wid in zip(enc.ids, enc.word_ids):
            if wid is not None:
                pieces[wid].append(pid)
        for tag in s.tags:
            if tag not in label2id:
                raise ConfigError(f"{s.source}: tag {tag} is not among the model's labels")
        w = 0
        while w < len(s.words):
            end, used, cut = w, 0, None
            while end < len(s.words) and used + max(1, len(pieces[end])) <= budget:
                used += len(pieces[end])
                end += 1
                if end < len(s.words) and not s.tags[end].startswith("I-"):
                    cut = end
            if end == w:  # one word longer than the budget: keep its first pieces
                end = w + 1
            elif end < len(s.words) and s.tags[end].startswith("I-") and cut is not None and cut > w:
                end = cut
            ids, labels, pos = [start_id], [-100], []
            for k in range(w, end):
                p = pieces[k][: budget - (len(ids) - 1)] if pieces[k] else []
                pos.append(len(ids) if p else -1)
                for j, pid in enumerate(p):
                    ids.append(pid)
                    labels.append(label2id[s.tags[k]] if j == 0 else -100)
            ids.append(end_id)
            labels.append(-100)
            chunks.append(_Chunk(si, w, end - w, ids, labels, pos))
            w = end
    return chunks


def _batches(chunks: list[_Chunk], batch_size: int, pad_id: int, order: list[int]):
    import torch

    for b in range(0, len(order), batch_size):
        sel = [chunks[i] for i in order[b : b + batch_size]]
        width = max(len(c.input_ids) for c in sel)
        ids = torch.full((len(sel), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(sel), width), dtype=torch.long)
        labels = torch.full((len(sel), width), -100, dtype=torch.long)
        for r, c in enumerate(sel):
            n = len(c.input_ids)
            ids[r, :n] = torch.tensor(c.input_ids)
            mask[r, :n] = 1
            labels[r, :n] = torch.tensor(c.labels)
        yield sel, ids, mask, labels


# --- scoring -------------------------------------------------------------------------------------
def score(gold: list[list[str]], pred: list[list[str]]) -> dict:
    """seqeval entity-level report (strict IOB2) as plain floats and ints."""
    from seqeval.metrics import classification_report
    from seqeval.scheme import IOB2

    rep = classification_report(gold, pred, mode="strict", scheme=IOB2, output_dict=True, zero_division=0)
    return {k: {m: (int(v) if m == "support" else float(v)) for m, v in d.items()} for k, d in rep.items()}


def predict(model, tok: BiotokTokenizer, sentences: Sequence[Sentence], labels: list[str],
            max_length: int, batch_size: int = 32) -> list[list[str]]:
    """Word-level tags: the argmax label of each word's first piece ('O' for a word without pieces)."""
    return _predict(model, tok, sentences, labels, max_length, batch_size)[0]


def _predict(model, tok: BiotokTokenizer, sentences: Sequence[Sentence], labels: list[str],
             max_length: int, batch_size: int) -> tuple[list[list[str]], float]:
    """Tags and the mean token-classification loss (the dev tie-breaker)."""
    import torch

    label2id = {l: i for i, l in enumerate(labels)}
    chunks = encode(tok, sentences, label2id, max_length)
    out = [["O"] * len(s.words) for s in sentences]
    device = next(model.parameters()).device
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for sel, ids, mask, lab in _batches(chunks, batch_size, frame_ids(tok)[2], list(range(len(chunks)))):
            res = model(input_ids=ids.to(device), attention_mask=mask.to(device), labels=lab.to(device))
            total, n = total + float(res.loss) * len(sel), n + len(sel)
            best = res.logits.argmax(-1).cpu()
            for r, c in enumerate(sel):
                for k, p in enumerate(c.word_pos):
                    if p >= 0:
                        out[c.sentence][c.first_word + k] = labels[int(best[r, p])]
    return out, total / max(1, n)


# --- training ------------------------------------------------------------------------------------
def _warmup_linear(optim, total: int, warmup: float):
    """Linear warm-up over ``warmup`` x total steps, then linear decay to 0 at ``total``."""
    import torch

    warm = max(1, int(warmup * total))
    return torch.optim.lr_scheduler.LambdaLR(
        optim, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )


def _train_epoch(model, batches, optim, sched, device, step: int, total: int) -> tuple[list[float], int]:
    """One pass over ``batches`` (stopping at ``total`` steps); returns the losses and the new step."""
    import torch

    model.train()
    losses: list[float] = []
    for _, ids, mask, lab in batches:
        if step >= total:
            break
        loss = model(input_ids=ids.to(device), attention_mask=mask.to(device), labels=lab.to(device)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optim.step()
        sched.step()
        optim.zero_grad()
        losses.append(float(loss.detach()))
        step += 1
    return losses, step


def _setup(model_path, dataset, config: NerConfig, model_cls, **model_kwargs):
    """Seed, load the tokenizer and the model with the dataset's labels: shared by NER and classification.

    Returns (tokenizer, labels, label -> id, training examples, model, max pieces per input).
    """
    import torch

    random.seed(config.seed)
    torch.manual_seed(config.seed)
    tok = load_model_tokenizer(model_path)
    labels = dataset.labels
    label2id = {l: i for i, l in enumerate(labels)}
    train = list(dataset.train[: config.max_train_sentences] if config.max_train_sentences else dataset.train)
    if not train or not dataset.dev or not dataset.test:
        raise ConfigError(f"dataset {dataset.name}: train, dev and test must all be non-empty")
    try:
        with quiet_transformers():
            model = model_cls.from_pretrained(
                str(model_path), num_labels=len(labels), id2label=dict(enumerate(labels)), label2id=label2id,
                **model_kwargs,
            )
    except (OSError, ValueError) as e:
        raise BiotokError(f"cannot load model {model_path}: {str(e).splitlines()[0]}") from None
    max_len = min(config.max_length, getattr(model.config, "max_position_embeddings", config.max_length) - 2)
    return tok, labels, label2id, train, model, max_len


def finetune_ner(
    model_path: str | os.PathLike[str],
    dataset: NerDataset,
    config: NerConfig = NerConfig(),
    out: str | os.PathLike[str] | None = None,
    *,
    progress: bool = True,
) -> NerResult:
    """Fine-tune ``model_path`` on ``dataset``; write results.json and test_predictions.tsv to ``out``."""
    import torch
    from transformers import AutoModelForTokenClassification

    t0 = time.time()
    tok, labels, label2id, train, model, max_len = _setup(
        model_path, dataset, config, AutoModelForTokenClassification
    )
    if getattr(model.config, "vocab_size", tok.vocab_size) < tok.vocab_size:
        raise ConfigError(f"{model_path}: tokenizer has {tok.vocab_size} ids, model only {model.config.vocab_size}")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    chunks = encode(tok, train, label2id, max_len)
    steps_per_epoch = math.ceil(len(chunks) / config.batch_size)
    total = steps_per_epoch * config.epochs
    if config.max_steps:
        total = min(total, config.max_steps)
    decay = [p for n, p in model.named_parameters() if not any(k in n for k in ("bias", "LayerNorm", "layer_norm"))]
    rest = [p for n, p in model.named_parameters() if any(k in n for k in ("bias", "LayerNorm", "layer_norm"))]
    optim = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": rest, "weight_decay": 0.0}], lr=config.lr
    )
    sched = _warmup_linear(optim, total, config.warmup)
    gen = random.Random(config.seed)
    best_f1, best_loss, best_epoch, best_state, bad, step = -1.0, math.inf, 0, None, 0, 0
    history: list[dict] = []
    pad = frame_ids(tok)[2]
    for epoch in range(1, config.epochs + 1):
        order = list(range(len(chunks)))
        gen.shuffle(order)
        batches = _batches(chunks, config.batch_size, pad, order)
        losses, step = _train_epoch(model, batches, optim, sched, device, step, total)
        dev_pred, dev_loss = _predict(model, tok, dataset.dev, labels, max_len, config.batch_size * 2)
        dev_f1 = score([list(s.tags) for s in dataset.dev], dev_pred)["micro avg"]["f1-score"]
        history.append({"epoch": epoch, "steps": step, "train_loss": sum(losses) / max(1, len(losses)),
                        "dev_loss": dev_loss, "dev_micro_f1": dev_f1})
        if progress:
            print(f"  epoch {epoch}: loss {history[-1]['train_loss']:.4f}  dev loss {dev_loss:.4f}  "
                  f"dev micro-F1 {dev_f1:.4f}", flush=True)
        if dev_f1 > best_f1 or (dev_f1 == best_f1 and dev_loss < best_loss):  # F1 first, dev loss breaks ties
            best_f1, best_loss, best_epoch, bad = dev_f1, dev_loss, epoch, 0
            best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        else:
            bad += 1
            if bad >= config.patience:
                break
        if step >= total:
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    gold = [list(s.tags) for s in dataset.test]
    pred = predict(model, tok, dataset.test, labels, max_len, config.batch_size * 2)
    result = NerResult(
        model=str(model_path), dataset=dataset.name, config=config, labels=labels, best_epoch=best_epoch,
        dev_micro_f1=best_f1, steps=step, seconds=round(time.time() - t0, 2), report=score(gold, pred), history=history,
    )
    if out is not None:
        write_outputs(result, dataset.test, pred, out)
    return result


def write_outputs(result: NerResult, test: Sequence[Sentence], pred: list[list[str]], out: str | os.PathLike[str]) -> None:
    """results.json and test_predictions.tsv (word, gold, predicted; blank line between sentences)."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    (d / "results.json").write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with open(d / "test_predictions.tsv", "w", encoding="utf-8") as f:
        for s, p in zip(test, pred):
            for w, g, t in zip(s.words, s.tags, p):
                f.write(f"{w}\t{g}\t{t}\n")
            f.write("\n")


def format_report(result: NerResult) -> str:
    """A terminal table: one row per entity type, then micro and macro averages."""
    rep = result.report
    types = sorted(k for k in rep if not k.endswith(" avg"))
    lines = [f"NER {result.dataset} · {result.model} · seed {result.config.seed} · best epoch {result.best_epoch}",
             f"{'type':<14}{'P':>8}{'R':>8}{'F1':>8}{'support':>9}"]
    for k in types + ["micro avg", "macro avg"]:
        r = rep[k]
        lines.append(f"{k:<14}{r['precision']:>8.4f}{r['recall']:>8.4f}{r['f1-score']:>8.4f}{r['support']:>9}")
    return "\n".join(lines)


# --- sentence-level classification (FrenchMedMCQA number of answers) ------------------------------
@dataclass(frozen=True)
class ClsResult:
    """Test accuracy and per-label / macro precision, recall, F1 of the best dev epoch."""

    model: str
    dataset: str
    config: NerConfig
    labels: list[str]
    best_epoch: int
    dev_accuracy: float
    steps: int
    seconds: float
    accuracy: float
    report: dict  # {label | 'macro avg': {precision, recall, f1-score, support}}
    history: list[dict] = field(default_factory=list)

    @property
    def macro_f1(self) -> float:
        return float(self.report["macro avg"]["f1-score"])

    def to_dict(self) -> dict:
        d = asdict(self)
        d["macro_f1"] = self.macro_f1
        return d


def cls_report(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> tuple[float, dict]:
    """Accuracy and {label: P/R/F1/support} plus the unweighted 'macro avg' over ``labels``."""
    rep: dict = {}
    for l in labels:
        tp = sum(g == l and p == l for g, p in zip(gold, pred))
        n_pred, n_gold = sum(p == l for p in pred), sum(g == l for g in gold)
        pr = tp / n_pred if n_pred else 0.0
        rc = tp / n_gold if n_gold else 0.0
        rep[l] = {"precision": pr, "recall": rc, "f1-score": 2 * pr * rc / (pr + rc) if pr + rc else 0.0,
                  "support": n_gold}
    rep["macro avg"] = {m: sum(rep[l][m] for l in labels) / len(labels) for m in ("precision", "recall", "f1-score")}
    rep["macro avg"]["support"] = len(gold)
    acc = sum(g == p for g, p in zip(gold, pred)) / max(1, len(gold))
    return acc, rep


def _encode_texts(tok: BiotokTokenizer, texts: Sequence[str], max_length: int) -> list[list[int]]:
    """[CLS] text [SEP], the text cut to its first ``max_length - 2`` pieces."""
    start_id, end_id, _ = frame_ids(tok)
    return [[start_id, *ids[: max_length - 2], end_id] for ids in tok.encode_batch_ids(list(texts))]


def _cls_batches(rows: list[list[int]], labels: list[int], batch_size: int, pad_id: int, order: list[int]):
    import torch

    for b in range(0, len(order), batch_size):
        sel = order[b : b + batch_size]
        width = max(len(rows[i]) for i in sel)
        ids = torch.full((len(sel), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(sel), width), dtype=torch.long)
        for r, i in enumerate(sel):
            ids[r, : len(rows[i])] = torch.tensor(rows[i])
            mask[r, : len(rows[i])] = 1
        yield sel, ids, mask, torch.tensor([labels[i] for i in sel], dtype=torch.long)


def finetune_cls(
    model_path: str | os.PathLike[str],
    dataset,
    config: NerConfig = NerConfig(),
    out: str | os.PathLike[str] | None = None,
    *,
    progress: bool = True,
) -> ClsResult:
    """Sequence classification on a :class:`~biotok_train.readers.ClsDataset`: the same recipe as
    NER (AdamW, warmup, early stopping on dev accuracy); writes results.json and test_predictions.tsv."""
    import torch
    from transformers import AutoModelForSequenceClassification

    t0 = time.time()
    tok, labels, lid, train, model, max_len = _setup(
        model_path, dataset, config, AutoModelForSequenceClassification,
        problem_type="single_label_classification",
    )
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    pad = frame_ids(tok)[2]
    rows, y = _encode_texts(tok, [e.text for e in train], max_len), [lid[e.label] for e in train]

    def run_predict(examples) -> list[str]:
        r = _encode_texts(tok, [e.text for e in examples], max_len)
        out_: list[str] = [""] * len(r)
        model.eval()
        with torch.no_grad():
            for sel, ids, mask, _ in _cls_batches(r, [0] * len(r), config.batch_size * 2, pad, list(range(len(r)))):
                best = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits.argmax(-1).cpu()
                for k, i in enumerate(sel):
                    out_[i] = labels[int(best[k])]
        return out_

    total = math.ceil(len(rows) / config.batch_size) * config.epochs
    if config.max_steps:
        total = min(total, config.max_steps)
    optim = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    sched = _warmup_linear(optim, total, config.warmup)
    gen = random.Random(config.seed)
    best_acc, best_epoch, best_state, bad, step = -1.0, 0, None, 0, 0
    history: list[dict] = []
    for epoch in range(1, config.epochs + 1):
        order = list(range(len(rows)))
        gen.shuffle(order)
        batches = _cls_batches(rows, y, config.batch_size, pad, order)
        losses, step = _train_epoch(model, batches, optim, sched, device, step, total)
        dev_acc, _ = cls_report([e.label for e in dataset.dev], run_predict(dataset.dev), labels)
        history.append({"epoch": epoch, "steps": step, "train_loss": sum(losses) / max(1, len(losses)), "dev_accuracy": dev_acc})
        if progress:
            print(f"  epoch {epoch}: loss {history[-1]['train_loss']:.4f}  dev accuracy {dev_acc:.4f}", flush=True)
        if dev_acc > best_acc:
            best_acc, best_epoch, bad = dev_acc, epoch, 0
            best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        else:
            bad += 1
            if bad >= config.patience:
                break
        if step >= total:
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    gold = [e.label for e in dataset.test]
    pred = run_predict(dataset.test)
    acc, rep = cls_report(gold, pred, labels)
    result = ClsResult(model=str(model_path), dataset=dataset.name, config=config, labels=labels, best_epoch=best_epoch,
                       dev_accuracy=best_acc, steps=step, seconds=round(time.time() - t0, 2), accuracy=acc, report=rep,
                       history=history)
    if out is not None:
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        (d / "results.json").write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        with open(d / "test_predictions.tsv", "w", encoding="utf-8") as f:
            for e, p in zip(dataset.test, pred):
                f.write(f"{e.source}\t{e.label}\t{p}\n")
    return result


def format_cls_report(result: ClsResult) -> str:
    """A terminal table: one row per label, then the macro average and accuracy."""
    lines = [f"classification {result.dataset} · {result.model} · seed {result.config.seed} · "
             f"best epoch {result.best_epoch}", f"{'label':<14}{'P':>8}{'R':>8}{'F1':>8}{'support':>9}"]
    for k in [*result.labels, "macro avg"]:
        r = result.report[k]
        lines.append(f"{k:<14}{r['precision']:>8.4f}{r['recall']:>8.4f}{r['f1-score']:>8.4f}{r['support']:>9}")
    lines.append(f"{'accuracy':<14}{result.accuracy:>24.4f}")
    return "\n".join(lines)
