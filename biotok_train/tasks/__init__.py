"""Downstream task data: one registry, one container, one door.

- :func:`load` (also ``biotok_train.load_dataset``): any task's data -- a registered name, a
  :class:`TaskSpec`, a BIO file or folder, or a user's train / dev / test files with a task type.
- :class:`TaskData`: what every reader returns (name, task type, labels, train / dev / test
  examples, and the spec it is scored by).
- :data:`TASKS`: the one registry, task name -> :class:`TaskSpec` (task type, benchmark metric,
  reader, suite, family); :func:`register` adds one, :func:`get_task` looks one up.

Readers, one module per source: :mod:`.ner` (QUAERO outermost, Mantra GSC, E3C, NCBI, BC5CDR,
BC2GM, a BIO path), :mod:`.blurb`, :mod:`.chemprot`, :mod:`.ddi`, :mod:`.pubmedqa`, :mod:`.quaero`
(DrBenchmark's conversion), :mod:`.morfitt`, :mod:`.frenchmedmcqa`, :mod:`.plain` (a user's files);
the example types are in :mod:`.examples`. The BIO and BRAT file readers themselves are torch-free
and live in :mod:`biotok.datasets`. No torch, no transformers.
"""

from __future__ import annotations

from biotok_train.tasks.examples import TASK_TYPES, TaskData
from biotok_train.tasks.registry import (
    TASKS, UNAVAILABLE, TaskSpec, get_task, load, plain_spec, register, suite_tasks, targets, task_type,
)

__all__ = [
    "TASKS", "TASK_TYPES", "TaskData", "TaskSpec", "UNAVAILABLE", "get_task", "load", "plain_spec", "register",
    "suite_tasks", "targets", "task_type",
]
