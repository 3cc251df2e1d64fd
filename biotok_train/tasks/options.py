"""The options of a user's own task files, as ``finetune`` and ``ablate`` take them: the same
options (``--task-type/--train/--dev/--test``) and the same checks (:func:`user_task_files`)."""

from __future__ import annotations

import click

from biotok_train.tasks.examples import TASK_TYPES

# A user's own task files, given as `finetune` and `ablate` take them (the same options, the same checks).
USER_TASK_OPTIONS = (
    click.option("--task-type", type=click.Choice(TASK_TYPES), default=None,
                 help="The task type of your own --train/--dev/--test files (finetune: instead of --task; "
                      "ablate: one more task, after the --task ones)."),
    click.option("--train", "train_file", type=click.Path(dir_okay=False, path_type=str), default=None,
                 help="With --task-type: training file (CoNLL columns for ner, TSV or JSONL otherwise)."),
    click.option("--dev", "dev_file", type=click.Path(dir_okay=False, path_type=str), default=None,
                 help="With --task-type: dev file (early stopping, lr choice)."),
    click.option("--test", "test_file", type=click.Path(dir_okay=False, path_type=str), default=None,
                 help="With --task-type: test file (the reported scores)."),
)


def user_task_options(f):
    """Put --task-type/--train/--dev/--test on the command function ``f``."""
    for option in reversed(USER_TASK_OPTIONS):
        f = option(f)
    return f


def user_task_files(task_type: str | None, train_file, dev_file, test_file) -> tuple | None:
    """(train, dev, test) of --task-type, each given; None without --task-type (then no file may
    be given). A missing one, or files without a type: one clear error."""
    from biotok.errors import ConfigError  # lazy: one use

    files = (("train", train_file), ("dev", dev_file), ("test", test_file))
    if task_type is None:
        if any(f is not None for _, f in files):
            raise ConfigError("--train/--dev/--test go with --task-type (the type of the files)")
        return None
    missing = [f"--{n}" for n, f in files if f is None]
    if missing:
        raise ConfigError(f"--task-type needs {', '.join(missing)}")
    return train_file, dev_file, test_file


__all__ = ["USER_TASK_OPTIONS", "user_task_files", "user_task_options"]
