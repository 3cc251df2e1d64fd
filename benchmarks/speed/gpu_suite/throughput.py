"""Step 2, throughput: ``biotok-train mlm`` against the HF ``Trainer`` on the same model and data,
tokens/s and MFU (:mod:`biotok_train.pretrain.flops`) at each sequence length."""

from __future__ import annotations

from pathlib import Path

from benchmarks.speed.gpu_suite.config import GOAL_MFU, GOAL_RATIO, SuiteConfig, field_of
from benchmarks.speed.gpu_suite.results import StepResult, device_info
from biotok_train.pretrain.flops import mfu, peak_tflops


def measure_throughput(cfg: SuiteConfig, tokenizer: str, corpus: str, work: Path, device) -> StepResult:
    """``pretrain`` (what ``biotok-train mlm`` runs) vs the HF Trainer at its best
    (:func:`benchmarks.pretrain_throughput.measure`), tokens/s, MFU and step times at each seq length."""
    from types import SimpleNamespace

    from benchmarks.speed import _mlm_sides as PT

    from biotok_train.config import PrepareConfig
    from biotok_train.pretrain.prepare import prepare

    name = device_info(str(device))["name"]
    peak = cfg.peak_tflops or (peak_tflops(name) if device.type == "cuda" else None)
    runs, notes = [], []
    for seq_len, batch in zip(cfg.seq_lens, cfg.batch_sizes):
        data = work / f"data-{seq_len}"
        if not (data / "meta.json").is_file():
            prepare([corpus], tokenizer, PrepareConfig(seq_len=seq_len, field_name=field_of(corpus, cfg.field_name)),
                    data, progress=False)
        args = SimpleNamespace(size=cfg.size, steps=cfg.warmup_steps + cfg.timed_steps, skip=cfg.warmup_steps,
                               batch_size=batch, compile=cfg.compile, compile_mode=cfg.compile_mode,
                               workers=cfg.hf_workers, device=str(device))
        r = PT.measure(data, args, work / f"tp-{seq_len}")
        if cfg.peak_tflops:  # the user's peak, not the table's
            per_token = PT.flops_of(data, cfg.size)
            r.update(biotok_mfu=mfu(r["biotok_tokens_per_s"], per_token, peak),
                     hf_mfu=mfu(r["hf_trainer_tokens_per_s"], per_token, peak))
        row = {"seq_len": seq_len, "batch_size": batch, "timed_steps": r["timed_steps"], "warmup_steps": cfg.warmup_steps,
               "params": r["params"], "flops_per_token": PT.flops_of(data, cfg.size),
               "biotok_tokens_per_s": r["biotok_tokens_per_s"], "hf_tokens_per_s": r["hf_trainer_tokens_per_s"],
               "ratio": r["ratio"], "hf_mode": r["hf_trainer_mode"], "biotok_mfu": r["biotok_mfu"],
               "hf_mfu": r["hf_mfu"], "biotok_step_s": r["biotok_step_s"], "hf_step_s": r["hf_step_s"],
               "hf_modes": r["hf_modes"], "same_tokens": r["same_tokens"], "bf16": r["bf16"],
               "biotok_final_loss": r["biotok_losses"][-1], "hf_final_loss": r["hf_losses"][-1] if r["hf_losses"] else None}
        row["met_ratio"] = row["ratio"] >= GOAL_RATIO
        row["met_mfu"] = row["biotok_mfu"] is not None and row["biotok_mfu"] >= GOAL_MFU
        runs.append(row)
    if device.type != "cuda":
        notes.append("on CPU: no MFU (no peak FLOP/s for a CPU)")
    if not cfg.compile:
        notes.append("both sides eager (--no-compile, or a dry run: inductor compiles for minutes on a CPU)")
    return StepResult(status="passed", data={
        "size": cfg.size, "compile": cfg.compile, "compile_mode": cfg.compile_mode, "peak_bf16_tflops": peak,
        "goal": {"ratio": GOAL_RATIO, "mfu": GOAL_MFU},
        "flops_formula": "6*N_dense + 12*L*d*s + 6*(d*d + d*V)*0.15 per token (flops_per_token)",
        "baseline": "transformers' Trainer on our loop's step batches (same weights, masks, order and tokens), "
                    "pre-masked rows + default_data_collator, bf16 where supported, eager and compiled: the faster",
        "token_count": "both sides: the non-padding tokens of the same batches",
        "notes": notes, "runs": runs})
