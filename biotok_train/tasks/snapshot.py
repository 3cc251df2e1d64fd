"""Task data kept under its content key: a task is read once, when it is keyed, and every later
use in this process takes those examples (:func:`keep`, :func:`kept`), never the files again, so
the bytes keyed are the bytes used. A process that was not given the data (a pool worker) reads
the files itself and :func:`checked` refuses them when they no longer have the key."""

from __future__ import annotations

from collections import OrderedDict

from biotok.errors import DataError

_KEPT: "OrderedDict[str, object]" = OrderedDict()
_MAX = 64  # task data sets kept at once (a notebook running ablation after ablation)


def keep(key: str, data) -> None:
    """Keep ``data`` (a :class:`~biotok_train.tasks.TaskData`) as the snapshot of content key ``key``."""
    _KEPT[key] = data
    _KEPT.move_to_end(key)
    while len(_KEPT) > _MAX:
        _KEPT.popitem(last=False)


def kept(key: str):
    """The data kept under ``key``, or None."""
    return _KEPT.get(key)


def checked(task: str, data, key: str, keyed) -> object:
    """``data`` when its content key (``keyed(task, data)``) is ``key``; else one DataError: its
    files changed since the run keyed them, so a result of them would sit under another key."""
    now = keyed(task, data)
    if now != key:
        sources = ", ".join(getattr(data, "sources", ())[:3]) or task
        raise DataError(f"task {task}: its files changed since this run keyed them ({sources}); run the same "
                        "command again to key and use the new contents")
    return data


__all__ = ["checked", "keep", "kept"]
