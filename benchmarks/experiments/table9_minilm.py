"""PubMedBERT's Table 9 on a CPU with a real pretrained model, all-MiniLM-L6-v2: a recipe over ``ablate``.

    python -m biotok_train.bases minilm                                      # once: the base into $BIOTOK_CACHE
    python -m benchmarks.experiments.table9_minilm --engine ray --workers 2  # docs/results/table9-minilm-cpu
    python -m benchmarks.experiments.table9_minilm --quick --out /tmp/t9     # a toy run end to end (minutes)

Arms (``ablate --base``): ``general`` (MiniLM as is, fine-tuned only), ``continual`` (its vocabulary + N MLM steps),
``transfer-fvt`` and ``transfer-random`` (a lowercased biotok WordPiece of MiniLM's size trained on the pretraining
text, :func:`benchmarks.corpora.english_pretraining_text`; new rows by FVT or random, + N steps) and the random-init
floors; the curve fine-tunes every pretrained arm on the first task at the --curve steps. Resumable.
"""

from __future__ import annotations

import dataclasses
import sys
from functools import partial
from pathlib import Path

from benchmarks import corpora as C, keyed as K, recipe as R
from biotok.config import NormalizeConfig, TrainConfig
from biotok.datadir import corpora_dir
from biotok_train.ablate import AblationConfig, Base, Curve, EngineConfig, Finetuning, Pretraining, Statistics, run_ablation
from biotok_train.ablate.render import publish
from biotok_train.bases import fetch_minilm
from biotok_train.config import FinetuneConfig, OptimConfig
from biotok_train.hf_models import model_config
from biotok_train.tasks.common import cache_root

OUT, F = C.REPO / "docs" / "results" / "table9-minilm-cpu", R.Flag
TITLE, LOWER = "Table 9 on a CPU with a real pretrained model: all-MiniLM-L6-v2", NormalizeConfig(lowercase=True)
OPTIONS = {"--tasks": F("ncbi-disease,bc5-chem", "registered tasks (the first draws the curve)"),
           "--seeds": F(3, "the number of fine-tuning seeds", low=1, high=100),  # a count, not ablate's list
           "--steps": F(1000, "the MLM steps of every pretrained arm", low=1),
           "--curve": F("250,500", "intermediate curve steps (0 and --steps are always in)"),
           "--vocab-size": F(0, "the biotok vocabulary's size (0: the base's)", low=0),
           "--base": F(None, "the base model folder (default: python -m biotok_train.bases minilm)", str),
           "--work": F(None, "models, runs and results (default $BIOTOK_CACHE/table9-minilm)", str),
           "--out": F(str(OUT), "where README.md, ablation.json and costs.json go"),
           "--engine": F("local", "who runs the ablation's jobs", choices=("local", "ray")),
           "--workers": F(0, "jobs at a time (0: as many as the cores)", low=0),
           "--quick": F(False, "a toy run end to end: 1 task, 1 seed, 4 steps, 400 lines")}
FT = FinetuneConfig(epochs=2, batch_size=16, max_length=128, train_fraction=0.25, optim=OptimConfig(lr=1e-4))
QUICK = dict(pretraining=Pretraining(budget=4, batch_size=2, seq_len=32, lr=1e-4), curve=Curve((2,)), statistics=Statistics(
    n_words=50, n_resamples=200), finetuning=Finetuning(dataclasses.replace(FT, epochs=1, max_steps=3, train_fraction=0.02)))


def recipe(a, tasks: list[str], corpora: Path, work: Path) -> AblationConfig:
    """The ablation from the flags (checked before any work, as typed: OPTIONS's bounds, --curve's here)."""
    curve = R.int_list(a.curve, "--curve", "MLM steps separated by commas (e.g. 250,500)")
    R.refuse([(all(0 < c < a.steps for c in curve), f"--curve {a.curve}: each step must be between 0 and --steps "
               f"{a.steps} (both excluded: they are always on the curve)")])
    return dataclasses.replace(AblationConfig(  # --quick: its groups swapped whole
        tokenizers=(str(work / "biotok"),), corpus=(str(work / "corpus.txt"),), tasks=tuple(tasks), data_dir=str(corpora),
        arms=("general", "continual", "transfer"), base=Base(a.base or "minilm", transfer_methods=("fvt", "random")),
        pretraining=Pretraining(budget=a.steps, batch_size=8, seq_len=128, lr=1e-4), curve=Curve(curve),
        finetuning=Finetuning(FT, seeds=tuple(range(a.seeds))), statistics=Statistics(n_resamples=2000)), **(QUICK if a.quick else {}))


def run(a) -> None:
    """The pretraining text, a lowercased WordPiece of the base's size on it, the ablation, its page in --out."""
    tasks = R.known_tasks(a.tasks.split(",")[:1 if a.quick else None])  # quick: the first task only
    work = Path(a.work) if a.work else cache_root() / ("table9-minilm-quick" if a.quick else "table9-minilm")
    corpora = corpora_dir() or C.CORPORA  # $BIOTOK_SHARED_DATA/corpora, else the checkout's ../shared/data/corpora
    cfg = recipe(a, tasks, corpora, work)
    work.mkdir(parents=True, exist_ok=True)
    text = C.english_pretraining_text(work / "corpus.txt", corpora, tasks, 400 if a.quick else 0)
    base = Path(a.base) if a.base else fetch_minilm()
    size = a.vocab_size or model_config(base)["vocab_size"]
    K.trained([work / "corpus.txt"], TrainConfig("wordpiece", vocab_size=size, normalize=LOWER), work / "biotok")
    report = run_ablation(dataclasses.replace(cfg, base=dataclasses.replace(cfg.base, model=str(base))), work / "ablation",
                          engine=EngineConfig(a.engine, a.workers))
    intro = f"Base: `{base.name}`. {C.pretraining_text_sentence(text)}"
    print(f"wrote {publish(report, Path(a.out), title=TITLE, command=a.command, intro=[intro])}", file=sys.stderr)


main = partial(R.command_line, "table9_minilm", __doc__, OPTIONS, run)  # main(argv): the exit code

if __name__ == "__main__":
    raise SystemExit(main())
