"""Step 2, throughput: ``biotok-train mlm`` against the HF ``Trainer`` on the same model and data,
tokens/s and MFU (:mod:`biotok_train.pretrain.flops`) at each sequence length."""

from __future__ import annotations

from pathlib import Path

from benchmarks.speed.gpu_suite.config import GOAL_MFU, GOAL_RATIO, SuiteConfig, field_of
from benchmarks.speed.gpu_suite.results import StepResult, device_info
from biotok_train.pretrain.flops import flops_per_token, mfu, peak_tflops


def measure_throughput(cfg: SuiteConfig, tokenizer: str, corpus: str, work: Path, device) -> StepResult:
    """``pretrain`` (what ``biotok-train mlm`` runs) vs HF Trainer, tokens/s and MFU at each seq length."""
    from types import SimpleNamespace

    from benchmarks.speed import _mlm_sides as PT  # the same two sides as benchmarks.speed.pretrain_throughput

    from biotok_train.config import SIZES
    from biotok_train.pretrain.packed import PackedData
    from biotok_train.config import PrepareConfig
    from biotok_train.pretrain.prepare import prepare

    layers, hidden, _, inter, _ = SIZES["bert"][cfg.size]
    name = device_info(str(device))["name"]
    peak = cfg.peak_tflops or (peak_tflops(name) if device.type == "cuda" else None)
    runs, notes = [], []
    for seq_len, batch in zip(cfg.seq_lens, cfg.batch_sizes):
        data = work / f"data-{seq_len}"
        if not (data / "meta.json").is_file():
            prepare([corpus], tokenizer, PrepareConfig(seq_len=seq_len, field_name=field_of(corpus, cfg.field_name)),
                    data, progress=False)
        vocab = PackedData(data).vocab_size
        args = SimpleNamespace(size=cfg.size, steps=cfg.warmup_steps + cfg.timed_steps, skip=cfg.warmup_steps,
                               batch_size=batch, compile=cfg.compile, device=str(device))
        ours = PT.ours(data, args, work / f"ours-{seq_len}")
        hf = PT.hf_trainer(data, args, work / f"hf-{seq_len}")
        per_token = flops_per_token(layers, hidden, inter, seq_len, vocab, predicted_fraction=0.15)
        row = {"seq_len": seq_len, "batch_size": batch, "timed_steps": cfg.timed_steps, "warmup_steps": cfg.warmup_steps,
               "params": ours["params"], "vocab_size": vocab, "flops_per_token": per_token,
               "biotok_tokens_per_s": ours["tokens_per_s"], "hf_tokens_per_s": hf["tokens_per_s"],
               "ratio": ours["tokens_per_s"] / hf["tokens_per_s"],
               "biotok_mfu": mfu(ours["tokens_per_s"], per_token, peak), "hf_mfu": mfu(hf["tokens_per_s"], per_token, peak),
               "biotok_final_loss": ours["final_loss"]}
        row["met_ratio"] = row["ratio"] >= GOAL_RATIO
        row["met_mfu"] = row["biotok_mfu"] is not None and row["biotok_mfu"] >= GOAL_MFU
        runs.append(row)
    if device.type != "cuda":
        notes.append("on CPU: no bf16 autocast in the loop (CUDA only) and no MFU (no peak FLOP/s for a CPU)")
    if not cfg.compile:
        notes.append("both sides eager (--no-compile, or a dry run: inductor compiles for minutes on a CPU)")
    return StepResult(status="passed", data={
        "size": cfg.size, "compile": cfg.compile, "bf16": device.type == "cuda", "peak_bf16_tflops": peak,
        "goal": {"ratio": GOAL_RATIO, "mfu": GOAL_MFU},
        "flops_formula": "6*N_dense + 12*L*d*s + 6*(d*d + d*V)*0.15 per token (flops_per_token)",
        "token_count": "biotok: non-padding tokens; HF: batch x seq_len (the data is packed: little padding)",
        "notes": notes, "runs": runs})
