"""Whether worker processes may be spawned from here without running the caller's script again.

A ``spawn`` worker (biotok's start method: a clean interpreter, safe whatever threads this process
runs) first imports the parent's main script. A script that calls biotok at its top level,
outside ``if __name__ == "__main__":``, would then run again in every worker, which
multiprocessing stops with a ``RuntimeError ... bootstrapping phase`` traceback. ``fork`` would
avoid the import but copies this process with its threads (tokenizers' and torch's pools, tqdm's
monitor) mid-flight, which can deadlock a worker; so the caller works in one process instead.

:func:`unguarded_main` tells that case apart by reading where the main script is now: the line
of its top level being run, inside or outside a ``__name__ == "__main__"`` block.
"""

from __future__ import annotations

import ast
import contextlib
import multiprocessing
import multiprocessing.context
import os
import sys
import threading
import time
from functools import lru_cache
from types import FrameType, ModuleType


def unguarded_main() -> str | None:
    """The main script's path when spawned workers would run its caller code again, else None.

    None (spawning is safe) for ``python -c``, a REPL or a notebook (no script to import),
    ``python -m pkg`` (a package's ``__main__`` is never imported again), a multiprocessing worker
    whose script was imported without trouble, and a call made under ``if __name__ == "__main__":``.
    """
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        return _main_path() or "__main__"  # a worker still importing its parent's script: no pool from here
    main = sys.modules.get("__main__")
    path = _main_path()
    if main is None or path is None:
        return None
    frame = _top_level_frame(main)
    if frame is None:
        # not called from the script's top level: in a worker of a guarded script (imported as
        # __mp_main__, it ran without calling us) it is safe; otherwise (atexit...) it cannot be told
        return None if getattr(main, "__name__", None) == "__mp_main__" else path
    return None if _under_main_guard(path, frame.f_lineno) else path


def _main_path() -> str | None:
    """The file spawn would import in each worker (as multiprocessing.spawn decides), or None."""
    main = sys.modules.get("__main__")
    if main is None:
        return None
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None and (name == "__main__" or name.endswith(".__main__")):
        return None
    path = getattr(main, "__file__", None)
    if not isinstance(path, str) or os.path.splitext(os.path.basename(path))[0] == "ipython":
        return None
    return path


def _top_level_frame(main: ModuleType) -> FrameType | None:
    """The frame running the main script's top level, on the main thread (whatever thread calls)."""
    frame = sys._current_frames().get(threading.main_thread().ident or -1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is vars(main):
            return frame
        frame = frame.f_back
    return None


def _under_main_guard(path: str, line: int) -> bool:
    """Whether ``line`` of ``path`` is in the body of a top-level ``if __name__ == "__main__":``."""
    return any(first <= line <= last for first, last in _guarded_lines(path))


@lru_cache(maxsize=8)
def _guarded_lines(path: str) -> tuple[tuple[int, int], ...]:
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):  # unreadable: cannot tell, so not guarded
        return ()
    return tuple((node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno)
                 for node in tree.body if isinstance(node, ast.If) and _is_main_test(node.test))


def _is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either side)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and \
        any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def exit_with_parent(parent: int, every: float = 1.0) -> None:
    """A worker whose parent is gone (killed with SIGKILL) exits instead of waiting for work forever.

    ``parent`` is the pool's process id as the parent saw it: a worker still starting when its
    parent is killed is already orphaned here, so ``os.getppid()`` at this point would not do.
    A daemon thread checks it again every ``every`` seconds.
    """
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(1)

    threading.Thread(target=watch, name="biotok-parent-watch", daemon=True).start()


def end_broken_pool(pool) -> None:
    """Kill the workers still alive of a process pool one of whose workers died, so that its
    ``shutdown(wait=True)`` ends. (CPython's pool, on a dead worker, sends SIGTERM to the workers
    it knows at that instant, then waits for every worker it knows: one that a ``submit`` in
    another thread was starting meanwhile never gets the signal, and the wait never ends.) A pool
    that is not broken, or not a process pool, is left alone."""
    if not getattr(pool, "_broken", False):
        return
    for p in list((getattr(pool, "_processes", None) or {}).values()):
        if p.is_alive():
            p.kill()


@contextlib.contextmanager
def main_hidden():
    """While a worker is spawned: ``__main__`` names neither its file nor its module, so the worker
    does not import (run) the caller's script again. Only for workers that unpickle biotok's
    module-level functions and plain data, never a function of the script."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


SPAWN_LOCK = threading.Lock()  # one start at a time: __main__ is hidden for the start's length


class _PlainProcess(multiprocessing.context.SpawnProcess):
    """A spawned process that never imports the parent's ``__main__`` (:func:`main_hidden`)."""

    @staticmethod
    def _Popen(process_obj):
        with SPAWN_LOCK, main_hidden():
            return multiprocessing.context.SpawnProcess._Popen(process_obj)


class _PlainContext(multiprocessing.context.SpawnContext):
    Process = _PlainProcess


def spawn_context() -> multiprocessing.context.SpawnContext:
    """A ``spawn`` context whose workers do not run the caller's script again: a pool of biotok's
    jobs works the same from a script without ``if __name__ == "__main__":`` (issue 46)."""
    return _PlainContext()


__all__ = ["SPAWN_LOCK", "end_broken_pool", "exit_with_parent", "main_hidden", "spawn_context", "unguarded_main"]
