"""Tokens/s of ``biotok-train mlm`` (our loop) vs transformers' ``Trainer`` at its best, side by side.

Both sides train the same BERT (``BertForMaskedLM`` from the same config and seed, SDPA
attention) on the SAME batches: the packed rows and masks the loop draws at each step
(:func:`biotok_train.pretrain.feed.masked_batch`), handed to the Trainer pre-masked in the same
order (sequential sampler, ``default_data_collator``, loader workers on CUDA), so both sides count
the same real tokens per step. Both use bf16 autocast where the hardware has it (the Trainer its
own ``bf16=True``; on CPU too) and the same optimizer settings; the Trainer runs eager and, with
``--compile``, compiled too, and the faster is the baseline. Every step is timed (a device sync
at its end, on both sides); the timed window starts after ``--skip`` steps AND after the last step
that compiled a graph (``torch._dynamo`` counters), so warm-up and recompilation are never timed.
Prints both and the ratio, with each side's per-step time distribution, and writes a JSON.

Why: the first H200 run of this benchmark (benchmarks/results/gpu/h200-2026-11-27/) measured
the Trainer at 1 % MFU (1.2 s a step). Its Trainer side built every row with a per-item
``PackedData.batch`` in the training process and masked it with ``DataCollatorForLanguageModeling``
(a Python pass over every token), without loader workers, on other rows in another (shuffled)
order than our side, and timed only the whole window, so a compiling or otherwise slow step could
not be told apart (benchmarks/README.md, GPU suite, says what part of the 1.2 s each explains).

    python -m benchmarks.speed.pretrain_throughput --size tiny --steps 30 --batch-size 16          # CPU
    python -m benchmarks.speed.pretrain_throughput --size base --steps 60 --batch-size 128 --compile  # GPU
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import torch

from benchmarks.corpora import CAMEMBERTA, SAMPLE
from benchmarks.speed._mlm_sides import measure
from biotok_train.config import PrepareConfig
from biotok_train.pretrain.prepare import prepare


def _print(r: dict, path: Path) -> None:
    pct = lambda x: f"{100 * x:.1f} %" if x is not None else "n/a"  # noqa: E731
    ms = lambda s: f"step {1000 * s['median']:.1f} ms [p10 {1000 * s['p10']:.1f}, p90 {1000 * s['p90']:.1f}]"  # noqa: E731
    print(f"device            {r['device']}  (bf16 {r['bf16']})")
    print(f"model             bert-{r['size']}, {r['params'] / 1e6:.1f} M params, batch {r['batch_size']} x {r['seq_len']}")
    print(f"biotok-train mlm  {r['biotok_tokens_per_s']:>12,.0f} tokens/s   MFU {pct(r['biotok_mfu'])}   {ms(r['biotok_step_s'])}")
    print(f"HF Trainer ({r['hf_trainer_mode']}) {r['hf_trainer_tokens_per_s']:>9,.0f} tokens/s   MFU {pct(r['hf_mfu'])}   "
          f"{ms(r['hf_step_s'])}")
    print(f"ratio             {r['ratio']:.2f}x (same tokens per step: {r['same_tokens']})  -> {path}")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, help="prepared data dir (default: prepare the sample corpus)")
    ap.add_argument("--tokenizer", default=str(CAMEMBERTA))
    ap.add_argument("--corpus", default=str(SAMPLE))
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--skip", type=int, default=5, help="untimed first steps (and every step that compiles)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--compile", action="store_true", help="compile ours; time the Trainer eager and compiled")
    ap.add_argument("--compile-mode", default="default", help="our side's torch.compile mode (reduce-overhead: CUDA graphs)")
    ap.add_argument("--workers", type=int, default=2, help="the Trainer's data-loader workers on CUDA")
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=None, help="CPU threads (torch.set_num_threads)")
    ap.add_argument("--json", type=Path, default=Path("pretrain_throughput.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = args.data or prepare([args.corpus], args.tokenizer, PrepareConfig(seq_len=args.seq_len), work / "data",
                                      progress=False).path
        result = measure(data, args, work)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    _print(result, args.json)


if __name__ == "__main__":
    main()
