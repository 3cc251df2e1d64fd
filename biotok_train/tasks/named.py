"""A user's task as one string, as ``ablate --task`` keeps it (its recipe lists strings): named by
the user (``NAME=PATH``: the page shows NAME, not the folder's name), and train / dev / test files
of a task type (``TYPE:["train","dev","test"]``, what ``--task-type/--train/--dev/--test`` give).
Neither the name nor the paths key anything: a user's files are keyed by their bytes and type
(:func:`biotok_train.ablate.keys.task_key`)."""

from __future__ import annotations

import json
import os
import re

from biotok_train.tasks.examples import TASK_TYPES

_NAME = re.compile(r"([A-Za-z0-9][\w.-]*)=(.+)", re.S)


def split_name(source: str) -> tuple[str | None, str]:
    """(NAME, the rest) of ``NAME=PATH``; (None, ``source``) for anything else, an existing path
    with "=" in it included."""
    m = _NAME.fullmatch(source)
    if m is None or os.path.exists(source):
        return None, source
    return m.group(1), m.group(2)


def files_source(task_type: str, train: str | os.PathLike[str], dev: str | os.PathLike[str],
                 test: str | os.PathLike[str], name: str | None = None) -> str:
    """The one string of a user's ``task_type`` files (and their name): what :func:`parse_files` reads."""
    text = f"{task_type}:{json.dumps([os.fspath(train), os.fspath(dev), os.fspath(test)], ensure_ascii=False)}"
    return f"{name}={text}" if name else text


def parse_files(source: str) -> tuple[str, list[str]] | None:
    """(task type, [train, dev, test]) of a :func:`files_source` string (its name split off first); else None."""
    kind, sep, rest = source.partition(":")
    if not sep or kind not in TASK_TYPES or not rest.startswith("["):
        return None
    try:
        files = json.loads(rest)
    except ValueError:
        return None
    if not (isinstance(files, list) and len(files) == 3 and all(isinstance(f, str) for f in files)):
        return None
    return kind, files


def input_paths(source: str) -> list[str]:
    """The files or folder a task string reads (none for a registered name that is no path)."""
    _, rest = split_name(source)
    files = parse_files(rest)
    return files[1] if files else [rest]


__all__ = ["files_source", "input_paths", "parse_files", "split_name"]
