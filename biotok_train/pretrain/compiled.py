"""``torch.compile`` in the pretraining loop: when it is on (``compile="auto"``: on CUDA, where the
GPU suite's equivalence checks pass, off on CPU where inductor compiles for minutes), with which
mode (``compile_mode="auto"``: CUDA graphs where they were measured to pay), and a compile failure
turned into one error line that names its root cause.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import sys
import threading
from pathlib import Path

import torch
from torch import nn

from biotok_train.config import PretrainConfig
from biotok_train.errors import CompileError


def compile_enabled(config: PretrainConfig, device: torch.device) -> bool:
    """``compile`` "on", or "auto" on a CUDA device for a model biotok builds (the GPU suite checks
    BERT, ALBERT and ELECTRA; a model continued with ``--init-from`` stays eager under "auto")."""
    if config.compile == "auto":
        return torch.device(device).type == "cuda" and config.init_from is None
    return config.compile == "on"


# Where ``compile_mode="auto"`` replays the step as CUDA graphs (reduce-overhead): what was measured
# on an H200 (2026-11-28, BERT-small MLM, 64 x 128, steps 50-150): eager 440-554 k tokens/s, default
# mode 569-757 k, reduce-overhead 866-962 k. A small model's step is a few ms of many short kernels,
# so launching them is what graphs save; a base model's kernels are long and gain little, and were
# not measured. The loop's shapes are static (packed rows; predicted positions padded to one of at
# most 16 buckets, each bucket one graph), which graphs need. Left at the default mode: DDP (graphs
# around its all-reduce hooks untested here), ALBERT and ELECTRA (not measured with graphs yet:
# benchmarks/speed/gpu_suite/slot_speed.py measures ELECTRA), models continued with --init-from.
GRAPH_SIZES = ("tiny", "small")


def resolved_mode(config: PretrainConfig, device: torch.device, world: int = 1) -> str:
    """The torch.compile mode the run uses: ``config.compile_mode``, "auto" resolved (reduce-overhead
    for a fresh BERT MLM of a :data:`GRAPH_SIZES` size on one CUDA device, else default)."""
    if config.compile_mode != "auto":
        return config.compile_mode
    graphs = (torch.device(device).type == "cuda" and world == 1 and config.objective == "mlm"
              and config.arch == "bert" and config.size in GRAPH_SIZES and config.init_from is None
              and config.compile_backend == "inductor")
    return "reduce-overhead" if graphs else "default"


def with_resolved_mode(config: PretrainConfig, device: torch.device, world: int = 1) -> PretrainConfig:
    """``config`` with its compile mode resolved (:func:`resolved_mode`): the run, its checkpoint and
    its compile errors name the mode that ran."""
    mode = resolved_mode(config, device, world)
    return config if mode == config.compile_mode else dataclasses.replace(config, compile_mode=mode)


def compile_module(module: nn.Module, config: PretrainConfig) -> nn.Module:
    """``module`` compiled with the config's mode and backend; static shapes (the loop's batches
    are packed rows and bucketed predicted positions), so ``reduce-overhead`` can use CUDA graphs."""
    kwargs = {"backend": config.compile_backend, "dynamic": False}
    if config.compile_mode != "default":
        kwargs["mode"] = config.compile_mode
    return torch.compile(module, **kwargs)


def graphs_compiled() -> int:
    """Graphs torch.compile has built in this process so far: logged per row, so a recompilation
    (a new shape bucket) shows in metrics.jsonl and benchmarks time only the steps after it."""
    try:
        from torch._dynamo.utils import counters  # lazy: a private module, absent in some builds

        return int(counters["stats"]["unique_graphs"])
    except (ImportError, KeyError):
        return 0


log = logging.getLogger(__name__)


def release_compile_workers(timeout: float = 10.0) -> bool:
    """Stop inductor's compile-worker pools now, waiting at most ``timeout`` seconds, then kill the
    pool processes still there; True when one had to be killed. Without this the pools stop at
    interpreter exit, where ``SubprocPool.shutdown`` waits up to 300 s for its sidecar process
    (pytorch#162199: a pool that does not stop after a cold start): the likely reason the
    2026-11-28 ELECTRA process outlived its last line by over 140 s (``gpu_suite/slot_speed.py``
    checks each run's exit). The loop calls it when a run ends (the ablation's workers go on to
    eager fine-tunes); a later compilation starts a new pool."""
    mod = sys.modules.get("torch._inductor.async_compile")  # never imported: nothing was compiled
    pools = list(getattr(mod, "_pool_set", ())) if mod is not None else []
    if not pools:
        return False
    stopper = threading.Thread(target=mod.shutdown_compile_workers, name="biotok-compile-workers", daemon=True)
    stopper.start()
    stopper.join(timeout)
    if not stopper.is_alive():
        return False
    killed = False
    for pool in pools:
        proc = getattr(pool, "process", None)  # SubprocPool's sidecar (a ProcessPoolExecutor has none)
        if proc is not None and proc.poll() is None:
            proc.kill()
            killed = True
    stopper.join(timeout)
    if killed:
        log.warning("torch.compile's worker pool did not stop within %.0f s: killed", timeout)
    return killed


# Where a compile error's own message ends and torch's advice, graph dumps and tracebacks begin.
_ADVICE = ("While executing", "Original traceback", "from user code:", "Use tlparse", "Set TORCH_LOGS",
           "You can suppress", "import torch._dynamo", "torch._dynamo.config", "Explanation:", "Hint:",
           "Developer debug context", "For more information")
_WHERE = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
_CPP_SOURCE = re.compile(r"^\S+\.(?:cpp|cc|h|cu):\d+: ")  # torch's C++ file:line before a message


def _innermost(exc: BaseException) -> BaseException:
    inner, seen = exc, set()
    while id(inner) not in seen:
        seen.add(id(inner))
        nxt = inner.__cause__ or getattr(inner, "inner_exception", None) or inner.__context__
        if nxt is None:
            break
        inner = nxt
    return inner


def root_cause(exc: BaseException, lines: int = 3) -> str:
    """The innermost exception of ``exc``'s chain (``__cause__``/``__context__``) as ``Type: its
    last message lines`` before torch's advice and graph dumps (compile errors wrap the real one in
    pages of them), and, when its text names one, the user code line it failed at."""
    inner = _innermost(exc)
    text = str(inner)
    message = []
    for line in (ln.strip() for ln in text.splitlines()):
        if line.startswith(_ADVICE):
            break
        if line:
            message.append(_CPP_SOURCE.sub("", line))
    where = _WHERE.findall(text)
    at = f" (at {Path(where[-1][0]).name}:{where[-1][1]}, {where[-1][2]})" if where else ""
    body = " | ".join(message[-lines:])
    return f"{type(inner).__name__}: {body}{at}" if body else f"{type(inner).__name__}{at}"


def is_compile_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or one it wraps) was raised by torch.compile (dynamo, AOT autograd, inductor)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if type(exc).__module__.startswith(("torch._dynamo", "torch._inductor", "torch._functorch")):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def compile_error(exc: BaseException, config: PretrainConfig) -> CompileError:
    """The one-line error of a failed compilation."""
    return CompileError(f"torch.compile ({config.compile_backend}, mode {config.compile_mode}) failed for "
                        f"{config.objective}/{config.arch}: {root_cause(exc, 1)[:400]} — run with --no-compile")


__all__ = ["GRAPH_SIZES", "compile_enabled", "compile_error", "compile_module", "graphs_compiled", "is_compile_error",
           "release_compile_workers", "resolved_mode", "root_cause", "with_resolved_mode"]
