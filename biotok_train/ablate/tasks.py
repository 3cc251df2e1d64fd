"""The tasks of an ablation, resolved in one place for the driver's check, a job's process and the
analysis: each task's spec, data (cut to what the fine-tunes score), task type and head."""

from __future__ import annotations

from typing import Any, NamedTuple

from biotok.errors import ConfigError


class Resolved(NamedTuple):
    spec: Any  # its TaskSpec
    data: Any  # its TaskData
    kind: str  # its task type
    head: Any  # the fine-tuning head of that type, whose metric the results name


def resolve_tasks(cfg, datasets: dict | None = None) -> dict[str, Resolved]:
    """``cfg``'s tasks (an AblationConfig's) read and each checked (every split non-empty: a broken
    task is refused before the first job), or ``datasets`` (task key -> data already read) as they are."""
    from biotok_train.finetune import make_head, resolve  # lazy: torch

    tasks = {}
    for t in cfg.tasks if datasets is None else datasets:
        spec, data, kind = resolve(t if datasets is None else datasets[t], None, cfg.data_dir)
        if datasets is None:
            empty = [name for name in ("train", "dev", "test") if not len(data.split(name))]
            if empty:
                raise ConfigError(f"--task {t}: its {' and '.join(empty)} split{'s are' if len(empty) > 1 else ' is'} "
                                  "empty (train, dev and test must all be non-empty)")
            data = data.evaluated_on(cfg.finetuning.recipe.max_eval_examples)  # what the fine-tunes score
        tasks[t] = Resolved(spec, data, kind, make_head(kind, cfg.finetune_config(cfg.finetuning.seeds[0]), spec))
    return tasks


def task_data(cfg) -> dict:
    """task key -> its data, read and checked (:func:`resolve_tasks`)."""
    return {t: r.data for t, r in resolve_tasks(cfg).items()}
