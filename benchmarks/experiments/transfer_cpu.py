"""Vocabulary transfer on CPU: does FVT start lower than random rows, and for how long? A recipe over ``ablate``.

    python -m benchmarks.experiments.transfer_cpu            # regenerates docs/results/transfer-cpu/ (about 15 CPU-minutes)
    python -m benchmarks.experiments.transfer_cpu --quick    # a few steps into benchmarks/.data/transfer_cpu/quick/ only

A general BERT-tiny (800 steps on the French WMT biomedical abstracts, CamemBERTa's vocabulary) is ``ablate --base`` on
the E3C PAMJ cases with a biotok spm-unigram of 8k pieces: arms ``transfer`` by ``fvt`` and by ``random``, 250 steps, the
held-out curve only, each final model fine-tuned once on E3C. Other options: :mod:`biotok_train.ablate.experiment`.
"""

from __future__ import annotations

import json
from pathlib import Path

import benchmarks._common as C
from benchmarks._common import CACHE, REPO, require_data
from benchmarks.corpora import CORPORA, PAMJ
from biotok import TrainConfig, train_tokenizer
from biotok_train.ablate import experiment as X, run_ablation, split_corpus
from biotok_train.ablate.keys import Key
from biotok_train.ablate.render import publish
from biotok_train.ablate.store import read_record
from biotok_train.ablate.config import AblationConfig, Base, Curve, Finetuning, Pretraining, Statistics
from biotok_train.config import FinetuneConfig, OptimConfig, PretrainConfig

WORK, PUBLISHED = CACHE / "transfer_cpu", REPO / "docs" / "results" / "transfer-cpu"
TITLE, TOK = "Vocabulary transfer on CPU: `fvt` vs `random` rows, then continual pretraining", "tok-clinical-8000"


def recipe(base: Path, tokenizer: Path, quick: bool):
    """The two transfer arms, the held-out curve only, one E3C fine-tuning of each final model."""
    cfg = AblationConfig(
        tokenizers=(str(tokenizer),), corpus=(str(PAMJ),), field_name="text", tasks=("e3c",), data_dir=str(CORPORA),
        arms=("transfer",), base=Base(str(base), transfer_methods=("fvt", "random")),
        pretraining=Pretraining(budget=250, batch_size=32, seq_len=128, lr=1e-3), curve=Curve((10, 25, 50, 100, 150, 200), ()),
        finetuning=Finetuning(FinetuneConfig(epochs=10, optim=OptimConfig(lr=5e-4))), statistics=Statistics(400, floor=False))
    return C.quick_variant(cfg, budget=4, n_words=40, curve=Curve((2,), ())) if quick else cfg


def intro(report, out: Path, vocab: str) -> list[str]:
    """The general model and the rows each method made (from the jobs' records), then the curve's verdict."""
    base = json.loads((Path(report.config.base.model) / "metrics.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    _, counts = read_record(out, str(Key("transfer", vocab=vocab, method="fvt")), None)
    rows = ", ".join(f"{n:,} {kind}" for kind, n in counts["counts"].items() if n)
    lines = [f"General model: BERT-tiny, {base['step']:,} steps on the French WMT biomedical abstracts with CamemBERTa's "
             f"vocabulary (final training loss {base['loss']:.2f}). Rows of the in-domain vocabulary ({rows}): the "
             "composed ones are `fvt`'s mean of the old rows of the piece's CamemBERTa pieces, drawn at random by "
             f"`random`. {report.costs['total_cpu_s'] / 60:.0f} CPU-minutes of ablate jobs (`costs.json`; the general "
             "model is not counted).", "", "## In short", ""]
    return lines + [f"- {s}" for s in report.sentences if s.startswith("On the held-out curve")]


def cpu_side(work: Path, dest: Path, command: str, a) -> None:
    """The general model, the ablation's corpus split, and the vocabulary trained on its pretraining part only."""
    C.general_model(work / "general", WORK / "data-general-128", PretrainConfig(
        size="tiny", steps=4 if a.dry_run else 800, batch_size=32, seed=0, device="cpu", log_every=25,
        optim=OptimConfig(lr=1e-3, warmup=0.06)))  # the general model: on WMT-biomed French, CamemBERTa's vocabulary
    train, _, _ = split_corpus(config(work, ("e3c",) if a.dry_run else None), work / "ablation")
    if not (work / TOK / "tokenizer.json").is_file():
        train_tokenizer([train], TrainConfig(algo="spm-unigram", vocab_size=8000, seed=0), work / TOK, force=True)


def page(work: Path, dest: Path, command: str, downstream) -> None:
    """The report from the records alone, and its page."""
    report = run_ablation(config(work, ("e3c",) if work.name == "quick" else None), work / "ablation", progress=False)
    publish(report, dest, title=TITLE, intro=intro(report, work / "ablation", TOK), command=command)


config = lambda work, tasks: recipe(work / "general", work / TOK, tasks is not None)  # noqa: E731


def main(argv: list[str] | None = None) -> int:
    return X.main(X.Experiment("transfer_cpu", __doc__, config, cpu_side, page, CACHE, REPO / ".gpu", PUBLISHED, ("e3c",),
                               require=require_data, gpu_by_default=True, out="ablation", threads=0, verbose=True,
                               workdir=lambda dry: WORK / ("quick" if dry else "full")), argv)


if __name__ == "__main__":
    raise SystemExit(main())
