"""bf16 autocast where the hardware has bf16 matrix units: one policy for pretraining, fine-tuning,
the probe and evaluation.

A CUDA GPU with bf16 support, or a CPU whose flags list ``amx_bf16`` (Intel AMX) or
``avx512_bf16`` (AVX-512 BF16: recent Xeons, AMD Zen 4+). Measured on an AMD EPYC with
avx512_bf16 and no AMX (``python -m benchmarks.speed.cpu_bf16``, one thread, a MiniLM-shaped
``BertForTokenClassification`` step, 6 x 384, batch 16 x 64, AdamW): 1.09 s fp32, 0.71 s under bf16
autocast (1.54x; 1.64x in a quieter run); fine-tuning a MiniLM-sized model 1.69x fewer CPU-seconds,
the tiny BERT 1.23x, the probe 1.14x (benchmarks/README.md). The issue's Xeon with AMX: 2.8 s vs 0.8 s.
So it pays on both, and is on by default on both; a CPU without either runs fp32 (autocast there
would emulate bf16, slower).
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path

import torch

CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU feature flags of /proc/cpuinfo (empty where there is none, e.g. macOS)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


@functools.lru_cache(maxsize=1)
def cpu_bf16() -> str | None:
    """The CPU's bf16 matrix unit (``amx_bf16`` or ``avx512_bf16``), or None: from torch's own
    CPU capability check, else /proc/cpuinfo."""
    caps: dict = {}
    try:
        caps = torch._C._cpu._get_cpu_capability()  # the flags torch's kernels dispatch on
    except (AttributeError, RuntimeError):
        pass
    for flag in CPU_BF16_FLAGS:
        if caps.get(flag) or flag in cpu_flags():
            return flag
    return None


def bf16_supported(device: torch.device | str) -> bool:
    """Whether bf16 autocast pays on ``device``: a bf16-capable CUDA GPU, or a CPU with bf16 matrix units."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        return cpu_bf16() is not None
    return False


def use_bf16(device: torch.device | str, bf16: bool | None = True) -> bool:
    """The decision for a run: ``bf16`` True (the default of every config) or None means "where
    supported" (:func:`bf16_supported`); False is fp32 everywhere."""
    return bf16 is not False and bf16_supported(device)


def autocast(device: torch.device | str, bf16: bool | None = True):
    """``torch.autocast`` to bf16 on ``device`` when :func:`use_bf16` says so, else a no-op context."""
    device = torch.device(device)
    if not use_bf16(device, bf16):
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)


def describe(device: torch.device | str, bf16: bool | None = True) -> str:
    """One line for logs and results: which precision a run on ``device`` uses, and why."""
    device = torch.device(device)
    if bf16 is False:
        return "fp32 (--no-bf16)"
    if use_bf16(device, bf16):
        return "bf16 autocast (" + ("CUDA" if device.type == "cuda" else f"CPU {cpu_bf16()}") + ")"
    return f"fp32 ({device.type} has no bf16 matrix units)"


__all__ = ["CPU_BF16_FLAGS", "autocast", "bf16_supported", "cpu_bf16", "cpu_flags", "describe", "use_bf16"]
