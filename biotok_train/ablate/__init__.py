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

The plan is a list of jobs in plan order (:mod:`~biotok_train.ablate.plan`; each a
:class:`~biotok_train.ablate.jobs.Job`), each named by a typed :class:`~biotok_train.ablate.keys.Key`
and with a done record keyed by the contents of its inputs (:mod:`~biotok_train.ablate.keys`),
kept in the store (:mod:`~biotok_train.ablate.store`: records, costs, markers, the archives that
carry them between machines): a rerun skips what is done and redoes what an input change made
stale; an engine runs the rest (:mod:`~biotok_train.ablate.engines`: in process, processes, or Ray
tasks on a laptop or a cluster). A recipe over it is configuration plus one call
(:mod:`~biotok_train.ablate.experiment`: its command line, GPU slots included). Every path of OUT:
:class:`~biotok_train.ablate.store.Layout`.

Layout of OUT::

    config.json                         the recipe (a resumed run must use the same one, or --force)
    corpus/pretrain.txt, heldout.txt    the split of the corpus (each Nth line held out)
    jobs/KEY.json, KEY.cost.json        each job's done record and its cost (CPU, wall seconds, device)
    data/NAME/, data/NAME.heldout/      NAME's prepared pretraining data and held-out lines
    transfer/METHOD/NAME/, init/        with a base: the base moved to NAME; random-init starts
    arms/SIZE/NAME/p{P}/                pretraining seed P: model/, curve/step-K/, TASK/f{F}/ (a fine-tuning run;
                                        TASK is the task name, or a path's name + a short hash), kK/ (the curve's)
    arms/SIZE/NAME/floor/p{P}/          random-init model/ and TASK/f{F}/ (with a base: arms/SIZE/floor.NAME/)
    probe/                              with --probe: the causal-LM probe of each vocabulary (probe.md, ...)
    ablation.json, costs.json           the results (:mod:`~biotok_train.ablate.results`); the page is rendered from them:
    ablation.md, ablation.png           (:mod:`~biotok_train.ablate.render`); heldout_curve.png with a --curve
"""

from __future__ import annotations

from biotok_train.ablate.analysis import analyze, compute_statistics, verdict_sentences, word_floor
from biotok_train.ablate.engines import Outcome, execute
from biotok_train.ablate.jobs import Job
from biotok_train.ablate.keys import content_keys
from biotok_train.ablate.plan import Leg, leg_names, plan_legs, task_dir
from biotok_train.ablate.render import markdown, plot, publish, published_readme, rewrite
from biotok_train.ablate.results import MLM, AblationReport, ArmResult, Results, load
from biotok_train.ablate.run import Incomplete, run_ablation, same_recipe, split_corpus
from biotok_train.ablate.config import (ARMS, BASE_SIZE, AblationConfig, Base, Curve, EngineConfig, Finetuning,
                                        Pretraining, Statistics)
from biotok_train.config import TRANSFER_METHODS

__all__ = ["ARMS", "BASE_SIZE", "MLM", "TRANSFER_METHODS", "AblationConfig", "AblationReport", "ArmResult", "Base",
           "Curve", "EngineConfig", "Finetuning", "Pretraining", "Statistics", "Incomplete", "Job", "Leg", "Outcome", "Results", "analyze", "compute_statistics",
           "content_keys", "execute", "leg_names", "load", "markdown", "plan_legs", "plot", "publish",
           "published_readme", "rewrite", "run_ablation", "same_recipe", "split_corpus", "task_dir",
           "verdict_sentences", "word_floor"]
