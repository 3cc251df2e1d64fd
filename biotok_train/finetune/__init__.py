"""Fine-tuning: one engine (:func:`~biotok_train.finetune.engine.fit`) and one small module per
task type, the *heads* (:data:`HEADS`): :mod:`.ner` (token classification), :mod:`.classify`
(single-label), :mod:`.relation` (single-label on masked or marked entities), :mod:`.multilabel`,
:mod:`.pair` (pair regression), :mod:`.yesno` (question + context classification) and :mod:`.mcq`
(multiple choice with several right answers). :func:`finetune` is the single entry: a model, a
task (a registered name, a :class:`~biotok_train.tasks.TaskSpec`, a BIO path, or the
:class:`~biotok_train.tasks.TaskData` that :func:`biotok_train.tasks.load` returns) and a
:class:`FinetuneConfig`; with a learning-rate grid it runs once per rate and keeps the best on dev.

Adding a task type: write ``finetune/<task>.py`` with a class following
:class:`~biotok_train.finetune.engine.Task`, list it in :data:`HEADS` and :func:`make_head`, and
register named tasks for it in :mod:`biotok_train.tasks.registry`. torch is imported only when
training starts.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable

from biotok.errors import ConfigError
from biotok.output import check_writable
from biotok_train.config import FinetuneConfig
from biotok_train.tasks import TaskData, TaskSpec, load, plain_spec
from biotok_train.finetune.classify import ClassifyTask, format_cls_report
from biotok_train.finetune.common import Metric
from biotok_train.finetune.engine import MARKER as RESULTS_MARKER
from biotok_train.finetune.engine import FinetuneResult, Task, fit, write_results
from biotok_train.finetune.mcq import MCQTask
from biotok_train.finetune.multilabel import DEFAULT_THRESHOLD, MultiLabelTask
from biotok_train.finetune.ner import NerTask, format_report
from biotok_train.finetune.pair import PairRegressionTask
from biotok_train.finetune.relation import RelationTask, can_mark
from biotok_train.finetune.yesno import YesNoTask

HEADS: dict[str, Callable[..., Task]] = {
    "ner": NerTask,
    "classify": ClassifyTask,
    "relation": RelationTask,
    "multilabel": MultiLabelTask,
    "pair-regression": PairRegressionTask,
    "yesno-qa": YesNoTask,
    "mcq": MCQTask,
}
"""Task type -> the head class the engine trains (its transformers Auto class: ``.auto_model``)."""

_TABLES: dict[str, Callable[[FinetuneResult], str]] = {
    "ner": format_report, "classify": format_cls_report, "relation": format_cls_report, "yesno-qa": format_cls_report,
}


def make_head(task_type: str, config: FinetuneConfig = FinetuneConfig(), spec: TaskSpec | None = None) -> Task:
    """A new head for ``task_type`` set up by ``config`` (scheme, relation input, threshold);
    with ``spec`` it reports and early-stops on the named task's benchmark metric."""
    if task_type not in HEADS:
        raise ConfigError(f"unknown task type {task_type!r} (one of {', '.join(HEADS)})")
    metric = Metric(spec.metric, spec.metric_options) if spec is not None else None
    threshold = config.threshold if config.threshold is not None else (
        spec.threshold if spec is not None and spec.threshold is not None else DEFAULT_THRESHOLD)
    if task_type == "ner":
        return NerTask(config.scheme, metric)
    if task_type == "relation":
        return RelationTask(config.relation_input, metric)
    if task_type == "multilabel" and threshold == "dev":  # chosen on dev from the grid
        return MultiLabelTask(DEFAULT_THRESHOLD, metric, grid=config.threshold_grid)
    if task_type in ("multilabel", "mcq"):
        return HEADS[task_type](DEFAULT_THRESHOLD if threshold == "dev" else threshold, metric)
    return HEADS[task_type](metric)


def task_info(spec: TaskSpec | None, task_type: str, config: FinetuneConfig) -> dict:
    """What a result needs to say about its task: the named task, its benchmark metric and the
    options that shape its data or decisions (tagging scheme, nested-entity policy, relation
    input, threshold, train fraction)."""
    info: dict[str, Any] = {"task_type": task_type}
    if spec is not None:
        info.update(task=spec.name, suite=spec.suite, family=spec.family, metric=spec.metric,
                    metric_options={k: list(v) if isinstance(v, tuple) else v for k, v in spec.metric_options},
                    description=spec.description)
        if spec.nested:
            info["nested"] = spec.nested
    if task_type == "ner":
        info["scheme"] = config.scheme
    if task_type == "relation":
        info["relation_input"] = config.relation_input
    if task_type in ("multilabel", "mcq"):
        head = make_head(task_type, config, spec)
        info["threshold"] = "dev" if getattr(head, "grid", ()) else getattr(head, "threshold")
    if config.train_fraction < 1:
        info["train_fraction"] = config.train_fraction
    return info


def resolve(task: str | os.PathLike[str] | TaskSpec | TaskData, task_type: str | None = None,
            data_dir: str | os.PathLike[str] | None = None,
            cache: str | os.PathLike[str] | None = None) -> tuple[TaskSpec, TaskData, str]:
    """(spec, data, task type) of what :func:`finetune` was given. ``task``: data read by
    :func:`biotok_train.tasks.load`, or what it reads (a registered name, a :class:`TaskSpec`, a
    BIO path). The spec is the one the data was loaded as; data without one (built by hand, a BIO
    path) is scored by its task type's default metric (:func:`~biotok_train.tasks.plain_spec`).
    ``task_type`` overrides the spec's."""
    data = task if isinstance(task, TaskData) else load(task, data_dir, cache)
    spec = data.spec if data.spec is not None else plain_spec(data)
    return spec, data, task_type or spec.task_type


def finetune(
    model: str | os.PathLike[str],
    dataset: str | os.PathLike[str] | TaskSpec | TaskData,
    config: FinetuneConfig = FinetuneConfig(),
    out: str | os.PathLike[str] | None = None,
    *,
    task: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
    force: bool = False,
    progress: bool = True,
    bar: bool | None = None,
    save_model: bool = True,
) -> FinetuneResult:
    """Fine-tune ``model`` on ``dataset`` and score it on test; with ``out``, write results.json,
    predictions.jsonl (and test_predictions.tsv) there, with ``save_model`` the fine-tuned model
    too (safetensors, labels named in its config, tokenizer: the task's ``transformers.pipeline``
    loads the folder), and README.md, its model card.

    ``dataset``: a registered task name (:data:`biotok_train.tasks.TASKS`), a :class:`TaskSpec`,
    a BIO file/folder (NER), or :class:`TaskData` (:func:`biotok_train.tasks.load`); ``task``
    overrides the task type. With ``config.lr_grid`` one run per learning rate, the
    best dev score kept (its test score is the result; every rate's dev score is in ``lr_search``).
    ``progress``: log lines; ``bar``: a progress bar over the optimizer steps (None: with
    ``progress``, when stderr is a terminal).
    """
    spec, data, kind = resolve(dataset, task, data_dir, cache)
    return run(model, spec, data, kind, config, out, force=force, progress=progress, bar=bar, save_model=save_model)


def run(model: str | os.PathLike[str], spec: TaskSpec | None, data: TaskData, task_type: str,
        config: FinetuneConfig = FinetuneConfig(), out: str | os.PathLike[str] | None = None, *,
        force: bool = False, progress: bool = True, bar: bool | None = None, save_model: bool = True) -> FinetuneResult:
    """:func:`finetune` on loaded data: the learning-rate grid over :func:`fit`, then the writing
    (with ``out`` and ``save_model``, the fine-tuned model too; without ``out`` it is not kept)."""
    if out is not None:
        check_writable(out, force, [model, *data.sources, *getattr(data, "roots", ())], marker=RESULTS_MARKER)  # never into what it reads
    if task_type == "relation" and config.relation_input == "markers" and not can_mark(data.train):
        raise ConfigError(f"{data.name}: --relation-input markers needs the unmasked sentence "
                          "and both entity spans (this set is masked only: use --relation-input mask)")
    results = []
    for lr in config.learning_rates():
        cfg = config.with_lr(lr)
        results.append(fit(model, make_head(task_type, cfg, spec), data, cfg, None, force=force, progress=progress,
                           bar=bar))
        keep = max(results, key=lambda r: r.dev_score) if out is not None and save_model else None
        results = [r if r is keep else _without_model(r) for r in results]  # one model in memory at most
    best = max(results, key=lambda r: r.dev_score)  # the first of equal ones: the grid's order
    search = [{"lr": r.config.optim.lr, f"dev_{r.dev_metric}": r.dev_score, "best_epoch": r.best_epoch} for r in results]
    info = task_info(spec, task_type, config)
    if info.get("threshold") == "dev":  # the threshold the best run chose on dev
        info.update(threshold=best.metrics["threshold"], threshold_from="dev")
    best = dataclasses.replace(best, lr_search=search if len(results) > 1 else [], task_info=info)
    if out is not None:
        write_results(best, make_head(task_type, best.config, spec), data.test, best.predictions, out, force=force)
    return best


def _without_model(result: FinetuneResult) -> FinetuneResult:
    """``result`` keeping its curves (TensorBoard) but not the fine-tuned model."""
    if result.trained is None or result.trained.model is None:
        return result
    return dataclasses.replace(result, trained=result.trained.without_model())


def format_result(result: FinetuneResult) -> str:
    """The terminal table of a result, in its head's format, then the benchmark metric and setup."""
    lines = [_TABLES[result.task](result)] if result.task in _TABLES else [
        f"{result.task} {result.dataset} · {result.model} · seed {result.config.seed} · best epoch {result.best_epoch}"]
    info = result.task_info
    metric = info.get("metric", result.dev_metric)
    if result.task not in _TABLES or "metric" in info:  # the benchmark metric first, then the head's own
        shown = {metric: result.metrics[metric]} if metric in result.metrics else {}
        shown.update({k: v for k, v in result.metrics.items() if k != metric})
        lines.append("  ".join(f"{k} {v:.4f}" for k, v in shown.items()))
    setup = [f"{k} {v}" for k, v in info.items() if k in ("scheme", "nested", "relation_input", "threshold",
                                                             "train_fraction")]
    if result.lr_search:
        setup.append("lr " + ", ".join(f"{r['lr']:g}" for r in result.lr_search) + f" -> {result.config.optim.lr:g} (dev)")
    if setup:
        lines.append("setup: " + "; ".join(setup))
    return "\n".join(lines)


__all__ = ["FinetuneConfig", "FinetuneResult", "HEADS", "Task", "finetune", "fit", "format_result", "make_head",
           "resolve", "run", "task_info"]
