"""PubMedBERT's Table 9 on a CPU with a real pretrained model, all-MiniLM-L6-v2: a recipe over ``ablate``.

    python -m biotok_train.bases minilm                                # once: the base into $BIOTOK_CACHE/bases/
    python -m benchmarks.experiments.table9_minilm --engine ray --workers 2        # regenerates docs/results/table9-minilm-cpu
    python -m benchmarks.experiments.table9_minilm --quick --out /tmp/t9           # a toy run end to end (a few minutes)

Arms (``ablate --base``): ``general`` (MiniLM as is, fine-tuned only), ``continual`` (its vocabulary
+ N MLM steps), ``transfer-fvt`` and ``transfer-random`` (a lowercased biotok WordPiece of MiniLM's
size trained on the pretraining text; new rows by FVT or random, + N steps) and the random-init
floors; the curve fine-tunes every pretrained arm on the first task at the --curve steps. The
pretraining text: the training splits of NCBI-disease, BC5CDR, BC2GM, JNLPBA and WMT biomedical
English abstracts, minus every line that is or contains a dev or test sentence of the evaluated
tasks (any registered task: --tasks). Resumable: the same command continues where it stopped.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tarfile
from pathlib import Path

from benchmarks.corpora import CORPORA, REPO
from biotok.errors import BiotokError

OUT = REPO / "docs" / "results" / "table9-minilm-cpu"
NER_TRAIN = ("ncbi-disease/train.tsv.gz", "bionlp-ner-en/BC5CDR-IOB_train.tsv.gz",
             "bionlp-ner-en/BC2GM-IOB_train.tsv.gz", "blurb-en/JNLPBA/train.tsv.gz")
WMT = ("wmt-biomed-fr-en/wmt_biomed_train_medline_scielo_edp_fr-en.tar.xz", ("medline_d1.en", "scielo_d1.en", "edp_d1.en"))


def pretraining_text(work: Path, corpora: Path, tasks: list[str], max_lines: int) -> dict:
    """WORK/corpus.txt: the training splits, minus the evaluated tasks' dev and test sentences."""
    from biotok.io import open_text, sha256_file
    from biotok_train.pretrain.exclude import eval_sentences, exclude_sentences

    evaluated = eval_sentences(tasks, str(corpora))  # an unknown task name fails here, before any work
    lines, sources = [], []
    for rel in NER_TRAIN:
        with open_text(corpora / rel, newline=None) as f:
            words = [line.split("\t")[0].strip() for line in f]
        part = " ".join(w if w and not w.startswith("-DOCSTART-") else "\n" for w in words).split("\n")
        lines += [p.strip() for p in part if p.strip()]
        sources.append({"file": rel, "sha256": sha256_file(corpora / rel)})
    with tarfile.open(corpora / WMT[0]) as tar:
        for name in WMT[1]:
            lines += [l.strip() for l in tar.extractfile(f"./{name}").read().decode("utf-8").splitlines() if l.strip()]
    sources.append({"file": WMT[0], "members": list(WMT[1]), "sha256": sha256_file(corpora / WMT[0])})
    ex = exclude_sentences(lines, evaluated)
    kept = list(ex.kept[:max_lines] if max_lines else ex.kept)
    (work / "corpus.txt").write_text("\n".join(kept) + "\n", encoding="utf-8")
    return {"sources": sources, "lines_in": len(lines), "evaluated_sentences": len(evaluated), **ex.to_dict(),
            "lines": len(kept), "sha256": sha256_file(work / "corpus.txt")}


def vocabulary(work: Path, base: Path, size: int) -> Path:
    """A lowercased biotok WordPiece of the base's size (or ``size``) trained on the pretraining text."""
    from biotok.config import NormalizeConfig, TrainConfig
    from biotok.train import train_tokenizer
    from biotok_train.hf_models import encoder_dir

    out = work / "biotok"
    if not (out / "tokenizer.json").is_file():
        size = size or json.loads((encoder_dir(base) / "config.json").read_text(encoding="utf-8"))["vocab_size"]
        train_tokenizer([work / "corpus.txt"], TrainConfig(algo="wordpiece", vocab_size=size,
                                                           normalize=NormalizeConfig(lowercase=True)), out, force=True)
    return out


MAX_SEEDS = 100  # fine-tuning seeds of one run (--seeds counts them)


def recipe(a: argparse.Namespace, tasks: list[str], corpora: Path, work: Path):
    """The ablation of this recipe from its flags, checked before any work: --seeds, --steps,
    --curve, --vocab-size and --workers are this recipe's (a count, not ablate's list of seeds),
    and each is named as the user typed it. The tokenizer and base are filled in once made."""
    from biotok.errors import ConfigError
    from biotok_train.config import AblationConfig, FinetuneConfig, OptimConfig

    if not 1 <= a.seeds <= MAX_SEEDS:
        raise ConfigError(f"--seeds {a.seeds}: the number of fine-tuning seeds must be between 1 and {MAX_SEEDS}")
    if a.steps < 1:
        raise ConfigError(f"--steps {a.steps}: the MLM steps of every pretrained arm must be at least 1")
    try:
        curve = tuple(int(s) for s in a.curve.split(",") if s.strip())
    except ValueError:
        raise ConfigError(f"--curve {a.curve!r}: give MLM steps separated by commas (e.g. 250,500)") from None
    if any(not 0 < c < a.steps for c in curve):
        raise ConfigError(f"--curve {a.curve}: each step must be between 0 and --steps {a.steps} (both excluded: "
                          "they are always on the curve)")
    if a.vocab_size < 0:
        raise ConfigError(f"--vocab-size {a.vocab_size}: give a size, or 0 for the base's")
    if a.workers < 0:
        raise ConfigError(f"--workers {a.workers}: give 0 (as many as the cores) or more")
    quick = a.quick
    return AblationConfig(
        tokenizers=(str(work / "biotok"),), corpus=(str(work / "corpus.txt"),), tasks=tuple(tasks),
        data_dir=str(corpora), base=a.base or "minilm", arms=("general", "continual", "transfer"),
        transfer_methods=("fvt", "random"), budget=4 if quick else a.steps, batch_size=2 if quick else 8,
        curve=(2,) if quick else curve, lr=1e-4,
        seeds=(0,) if quick else tuple(range(a.seeds)), n_words=50 if quick else 1000,
        finetune=FinetuneConfig(epochs=1 if quick else 2, batch_size=16, max_length=128, max_steps=3 if quick else 0,
                                train_fraction=0.02 if quick else 0.25, optim=OptimConfig(lr=1e-4)),
        n_resamples=200 if quick else 2000, seq_len=32 if quick else 128)


def main(argv: list[str] | None = None) -> int:
    from biotok.datadir import corpora_dir
    from biotok_train.ablate import run_ablation
    from biotok_train.ablate.render import publish
    from biotok_train.config import EngineConfig
    from biotok_train.tasks import get_task
    from biotok_train.tasks.common import cache_root

    p = argparse.ArgumentParser(prog="python -m benchmarks.experiments.table9_minilm", description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="ncbi-disease,bc5-chem", help="registered tasks (the first draws the curve)")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", type=int, default=1000, help="N, MLM steps of every pretrained arm")
    p.add_argument("--curve", default="250,500", help="intermediate curve steps (0 and N are always in)")
    p.add_argument("--vocab-size", type=int, default=0, help="0: the base's")
    p.add_argument("--base", help="the base model folder (default: python -m biotok_train.bases minilm)")
    p.add_argument("--work", help="models, runs and results (default $BIOTOK_CACHE/table9-minilm)")
    p.add_argument("--out", default=str(OUT), help="where README.md, ablation.json and costs.json go")
    p.add_argument("--engine", default="local", choices=("local", "ray"))
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="a toy run end to end: 1 task, 1 seed, 4 steps, 400 lines")
    a = p.parse_args(argv)
    try:
        quick = a.quick
        tasks = a.tasks.split(",")[:1] if quick else a.tasks.split(",")
        for t in tasks:  # a name it cannot use is refused before any work
            get_task(t)
        work = Path(a.work) if a.work else cache_root() / ("table9-minilm-quick" if quick else "table9-minilm")
        corpora = corpora_dir() or CORPORA  # $BIOTOK_SHARED_DATA/corpora, else the checkout's ../shared/data/corpora
        cfg = recipe(a, tasks, corpora, work)  # every number checked before any work, in this recipe's flags
        engine = EngineConfig(a.engine, a.workers)
        work.mkdir(parents=True, exist_ok=True)
        corpus = pretraining_text(work, corpora, tasks, 400 if quick else 0)
        if a.base:
            base = Path(a.base)
        else:
            from biotok_train.bases import fetch_minilm

            base = fetch_minilm()
        vocab = vocabulary(work, base, a.vocab_size)
        cfg = dataclasses.replace(cfg, tokenizers=(str(vocab),), base=str(base))
        report = run_ablation(cfg, work / "ablation", engine=engine)
        publish(report, Path(a.out), title="Table 9 on a CPU with a real pretrained model: all-MiniLM-L6-v2",
                command="python -m benchmarks.experiments.table9_minilm " + " ".join(sys.argv[1:] if argv is None else argv),
                intro=_intro(corpus, base))
    except BiotokError as e:
        print(f"table9_minilm: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {Path(a.out) / 'README.md'}", file=sys.stderr)
    return 0


def _intro(c: dict, base: Path) -> list[str]:
    """The pretraining text and the base, in words (the rest of the page is ablate's report)."""
    files = ", ".join(f"`{s['file']}` (sha256 {s['sha256'][:16]})" for s in c["sources"])
    return [f"Base: `{base.name}`. Pretraining text: the training splits {files}; {c['lines_in']:,} lines in, "
            f"**{c['excluded']:,} lines excluded** because they are or contain one of the {c['evaluated_sentences']:,} "
            f"dev/test sentences of the evaluated tasks ({c['matched']:,} distinct sentences found; "
            f"`biotok_train.pretrain.exclude`); {c['lines']:,} lines kept (sha256 {c['sha256'][:16]}), of which "
            "ablate holds out each 20th line (fertility, masked words, held-out [MASK] loss)."]


if __name__ == "__main__":
    sys.exit(main())
