"""Step 3, profile: where the BERT-small ablation step's time goes (the H200 run measured ~20 ms a
step for 8 k tokens, MFU 3-5 %): the loop's own step (:func:`biotok_train.pretrain.loop._train_step`,
batches built ahead as in a run) at the ablation's shape, eager and compiled, under
``torch.profiler``; per mode the step time, the share of it the GPU was busy, and the top operators."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from benchmarks.speed.gpu_suite.config import SuiteConfig
from benchmarks.speed.gpu_suite.results import StepResult

TOP = 15  # operators kept per mode


def _top_ops(prof, cuda: bool) -> list[dict]:
    """The ``TOP`` operators by self device time (CPU time on a CPU run)."""
    key = "self_device_time_total" if cuda else "self_cpu_time_total"
    rows = sorted(prof.key_averages(), key=lambda e: getattr(e, key, 0.0), reverse=True)[:TOP]
    return [{"op": e.key, "calls": e.count, "self_cpu_ms": e.self_cpu_time_total / 1e3,
             "self_device_ms": getattr(e, "self_device_time_total", 0.0) / 1e3} for e in rows]


def profile_mode(cfg: SuiteConfig, data: Path, device, work: Path, compile_: bool) -> dict:
    """Warm up (compiling), then profile ``cfg.profile_steps`` steps of the loop at the ablation's shape."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from biotok_train.config import OptimConfig, PretrainConfig
    from biotok_train.pretrain import distributed as D
    from biotok_train.pretrain import loop

    warm = 3
    pcfg = PretrainConfig(size=cfg.ablation_size, batch_size=cfg.ablation_batch_size, steps=warm + cfg.profile_steps,
                          optim=OptimConfig(lr=1e-4), compile="on" if compile_ else "off",
                          compile_mode=cfg.compile_mode, device=str(device), log_every=10**6)
    run = loop._setup(data, pcfg, work / f"profile-{'compiled' if compile_ else 'eager'}", False, force=True)
    cuda = device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    try:
        for step in range(warm):
            loop._train_step(run, step)
        sync()
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        times = []
        with profile(activities=acts) as prof:
            for step in range(warm, warm + cfg.profile_steps):
                t = time.perf_counter()
                loop._train_step(run, step)
                sync()
                times.append(time.perf_counter() - t)
    finally:
        run.feed.close()
        D.teardown(run.dist)
    ops = _top_ops(prof, cuda)
    busy = sum(getattr(e, "self_device_time_total", 0.0) for e in prof.key_averages()) / 1e6 if cuda else None
    return {"compile": compile_, "step_ms_median": 1e3 * statistics.median(times), "steps": len(times),
            "tokens_per_step": cfg.ablation_batch_size * cfg.ablation_seq_len,
            "gpu_busy_fraction": busy / sum(times) if busy is not None else None, "top_ops": ops,
            "table": prof.key_averages().table(sort_by="self_device_time_total" if cuda else "self_cpu_time_total",
                                               row_limit=TOP)}


def profile_step(cfg: SuiteConfig, data: Path, device, work: Path) -> StepResult:
    """The ablation's step profiled eager (as ``ablate`` ran it) and compiled (its default on CUDA now)."""
    modes = [profile_mode(cfg, data, device, work, False)]
    notes = []
    if device.type == "cuda":
        modes.append(profile_mode(cfg, data, device, work, True))
    else:
        notes.append("CPU: eager only (inductor compiles for minutes on a CPU); CPU times, no device times")
    return StepResult(status="passed", data={"size": cfg.ablation_size, "batch_size": cfg.ablation_batch_size,
                                             "seq_len": cfg.ablation_seq_len, "modes": modes, "notes": notes})
