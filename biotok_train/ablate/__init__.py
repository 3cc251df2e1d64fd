"""``biotok-train ablate``: which vocabulary wins on which task, and with what confidence.

Every tokenizer is an *arm*. At each model size, each arm gets the same recipe and the same
number of training token positions (steps × batch × sequence length; a vocabulary with fewer
pieces per word sees more characters of text in them, which the report states): prepare the
pretraining text, pretrain BERT MLM once per pretraining seed, measure fertility and sequence
length on held-out lines and masked-word accuracy on the same held-out words, then fine-tune
every task once per (pretraining seed, fine-tuning seed). A *floor* per size, arm and task:
the same fine-tuning from a randomly initialised model of the same size.

The report (:mod:`biotok_train.stats`): every number as mean ± std over seeds; for each
candidate against the reference (the first tokenizer), a paired bootstrap 95 % interval of the
difference over test examples pooled across seeds (an example is drawn with all its seeds) and
a verdict word; each arm against its floor, flagged when it does not beat it (then the budget
was too small to judge the vocabularies on that task); and, with several sizes, Kendall τ of
the vocabulary rankings between sizes.

Resumable: every finished part (prepared data, each pretraining, MLM score, each fine-tuning
run with its test predictions) is reused, and a finished arm (``done.json``) is not reopened.

Layout of OUT::

    config.json                         the recipe (a resumed run must use the same one)
    corpus/pretrain.txt, heldout.txt    the split of the corpus (each Nth line held out)
    data/NAME/                          NAME's prepared pretraining data (shared by the sizes)
    data/NAME.heldout/                  the held-out lines prepared with NAME (held-out [MASK] numbers)
    arms/SIZE/NAME/p{P}/                pretraining seed P: model/, pretrain.json, mlm.json, heldout_mlm.json,
                                        TASK/f{F}/ (results.json, predictions.json; TASK is
                                        the task name, or a path's name + a short hash)
    arms/SIZE/NAME/floor/p{P}/          random-init model/ and TASK/f{F}/
    arms/SIZE/NAME/done.json
    probe/                              with --probe: the causal-LM probe of each vocabulary (probe.md, ...)
    ablation.md, ablation.json, ablation.png, timings.json
"""

from __future__ import annotations

from biotok_train.ablate.analysis import compute_statistics, verdict_sentences
from biotok_train.ablate.plan import MLM, ArmResult, Leg, floor_dir, leg_names, plan_legs, task_dir
from biotok_train.ablate.report import AblationReport, format_report, plot
from biotok_train.ablate.run import run_ablation, same_recipe, split_corpus, word_floor
from biotok_train.config import ARMS, BASE_SIZE, TRANSFER_METHODS, AblationConfig

__all__ = ["ARMS", "BASE_SIZE", "MLM", "TRANSFER_METHODS", "AblationConfig", "AblationReport", "ArmResult", "Leg",
           "compute_statistics", "floor_dir", "format_report", "leg_names", "plan_legs", "plot", "run_ablation",
           "same_recipe", "split_corpus", "task_dir", "verdict_sentences", "word_floor"]
