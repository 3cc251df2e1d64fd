"""Vocabulary transfer on CPU: does FVT start lower than random rows, and for how long? A recipe over ``ablate``.

    python -m benchmarks.experiments.transfer_cpu            # regenerates docs/results/transfer-cpu/ (about 15 CPU-minutes)
    python -m benchmarks.experiments.transfer_cpu --quick    # a few steps into benchmarks/.data/transfer_cpu/quick/ only

A "general" BERT-tiny (800 steps, batch 32 x 128, lr 1e-3, seed 0, on the French WMT biomedical
abstracts with CamemBERTa's vocabulary; reused when there) is ``ablate --base`` on the E3C PAMJ
clinical cases (each 20th line held out) with a biotok spm-unigram of 8k pieces, cased, trained on
the pretraining part: arms ``transfer`` by ``fvt`` and by ``random`` (same seed, data order and
masks), 250 MLM steps (batch 32 x 128, lr 1e-3), the held-out curve at steps 0, 10, 25, 50, 100,
150, 200, 250 and nothing fine-tuned on it (``curve_tasks=()``); each final model fine-tuned once on E3C.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from benchmarks._common import CACHE, REPO, require_data
from benchmarks.corpora import CAMEMBERTA, CORPORA, PAMJ, wmt_french_file
from biotok_train.ablate.keys import Key
from biotok_train.ablate.store import read_record

WORK = CACHE / "transfer_cpu"
PUBLISHED = REPO / "docs" / "results" / "transfer-cpu"
TITLE = "Vocabulary transfer on CPU: `fvt` vs `random` rows, then continual pretraining"


def general_model(run: Path, steps: int) -> Path:
    """BERT-tiny pretrained ``steps`` steps on the French WMT biomedical abstracts with CamemBERTa's vocabulary."""
    from biotok_train.config import OptimConfig, PrepareConfig, PretrainConfig
    from biotok_train.pretrain.loop import pretrain
    from biotok_train.pretrain.prepare import open_prepared, prepare

    out, d = run / "general", WORK / "data-general-128"
    meta = out / "biotok_pretrain.json"
    if meta.is_file() and json.loads(meta.read_text(encoding="utf-8"))["step"] == steps:
        return out
    data = open_prepared(d) if (d / "meta.json").is_file() else prepare(
        [str(wmt_french_file(WORK / "general_fr.txt"))], str(CAMEMBERTA), PrepareConfig(seq_len=128), d, force=True,
        progress=False)
    pretrain(data.path, PretrainConfig(size="tiny", steps=steps, batch_size=32, seed=0, device="cpu", log_every=25,
                                       optim=OptimConfig(lr=1e-3, warmup=0.06)), out, resume=(out / "checkpoint").exists(),
             progress=False)
    return out


def recipe(base: Path, tokenizer: Path, quick: bool):
    """The two transfer arms, the held-out curve only, one E3C fine-tuning of each final model."""
    from biotok_train.config import AblationConfig, FinetuneConfig, OptimConfig

    return AblationConfig(
        tokenizers=(str(tokenizer),), corpus=(str(PAMJ),), field_name="text", tasks=("e3c",), data_dir=str(CORPORA),
        base=str(base), arms=("transfer",), transfer_methods=("fvt", "random"), budget=4 if quick else 250,
        curve=(2,) if quick else (10, 25, 50, 100, 150, 200), curve_tasks=(), batch_size=32, seq_len=128, lr=1e-3,
        pretrain_seeds=(0,), seeds=(0,), floor=False, n_words=40 if quick else 400,
        finetune=FinetuneConfig(epochs=1 if quick else 10, optim=OptimConfig(lr=5e-4), max_train_sentences=40 if quick else 0))


def intro(report, out: Path, vocab: str) -> list[str]:
    """The general model and the rows each method made (from the jobs' records), then the curve's verdict."""
    base = json.loads((Path(report.config.base) / "metrics.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    _, counts = read_record(out, str(Key("transfer", vocab=vocab, method="fvt")), None)
    rows = ", ".join(f"{n:,} {kind}" for kind, n in counts["counts"].items() if n)
    lines = [f"General model: BERT-tiny, {base['step']:,} steps on the French WMT biomedical abstracts with CamemBERTa's "
             f"vocabulary (final training loss {base['loss']:.2f}). Rows of the in-domain vocabulary ({rows}): the "
             "composed ones are `fvt`'s mean of the old rows of the piece's CamemBERTa pieces, drawn at random by "
             f"`random`. {report.costs['total_cpu_s'] / 60:.0f} CPU-minutes of ablate jobs (`costs.json`; the general "
             "model is not counted).", "", "## In short", ""]
    return lines + [f"- {s}" for s in report.sentences if s.startswith("On the held-out curve")]


def main(argv: list[str] | None = None) -> int:
    from biotok.config import TrainConfig
    from biotok.errors import BiotokError
    from biotok.train import train_tokenizer
    from biotok_train.ablate import leg_names, run_ablation, split_corpus
    from biotok_train.ablate.report import publish

    ap = argparse.ArgumentParser(prog="python -m benchmarks.experiments.transfer_cpu", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few steps, written to benchmarks/.data only")
    a = ap.parse_args(argv)
    require_data()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    run = WORK / ("quick" if a.quick else "full")
    tok, out = run / "tok-clinical-8000", run / "ablation"
    try:
        cfg = recipe(general_model(run, 4 if a.quick else 800), tok, a.quick)
        train, _, _ = split_corpus(cfg, out)  # the vocabulary never sees a held-out line
        if not (tok / "tokenizer.json").is_file():
            train_tokenizer([train], TrainConfig(algo="spm-unigram", vocab_size=8000, seed=0), tok, force=True)
        report = run_ablation(cfg, out, progress=False)
        dest = run / "published" if a.quick else PUBLISHED
        publish(report, dest, title=TITLE, intro=intro(report, out, leg_names([str(tok)])[0]),
                command=" ".join(["python -m benchmarks.experiments.transfer_cpu", *(sys.argv[1:] if argv is None else argv)]))
    except BiotokError as e:
        print(f"transfer_cpu: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {dest / 'README.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
