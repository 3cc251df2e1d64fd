"""Does bf16 autocast pay on this CPU? One thread: a MiniLM-shaped ``BertForTokenClassification``
training step (6 x 384, 12 heads, batch 16 x 64, SDPA, AdamW) in fp32 and under
``torch.autocast("cpu", dtype=torch.bfloat16)``, and a 1536 x 384 @ 384 x 1536 matmul in each
dtype; CPU-seconds (``time.process_time``), the two precisions alternated so that a change of load
hits both. What :mod:`biotok_train.precision` decides on this CPU is printed beside.

    python -m benchmarks.speed.cpu_bf16          # writes results/cpu_bf16.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from benchmarks._common import RESULTS, machine


def step_seconds(rounds: int, steps: int) -> dict[str, list[float]]:
    """CPU-seconds of training steps, fp32 and bf16 alternated ``rounds`` times (the first step of each
    round untimed)."""
    import torch
    from transformers import BertConfig, BertForTokenClassification

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30000, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                     intermediate_size=1536, num_labels=9, attn_implementation="sdpa")
    model = BertForTokenClassification(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    x, y = torch.randint(5, 30000, (16, 64)), torch.randint(0, 9, (16, 64))
    out: dict[str, list[float]] = {"fp32": [], "bf16": []}
    for _ in range(rounds):
        for name in out:
            for i in range(steps + 1):
                t = time.process_time()
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=name == "bf16"):
                    loss = model(input_ids=x, labels=y).loss
                loss.backward()
                opt.step()
                opt.zero_grad()
                if i:
                    out[name].append(time.process_time() - t)
    return out


def matmul_gflops(repeats: int = 20) -> dict[str, float]:
    import torch

    a, b = torch.randn(1536, 384), torch.randn(384, 1536)
    res = {}
    for dt in (torch.float32, torch.bfloat16):
        aa, bb = a.to(dt), b.to(dt)
        aa @ bb
        t = time.process_time()
        for _ in range(repeats):
            aa @ bb
        res[str(dt).replace("torch.", "")] = 2 * 1536 * 384 * 1536 * repeats / (time.process_time() - t) / 1e9
    return res


def main(argv: list[str] | None = None) -> int:
    import torch

    from biotok_train.precision import cpu_bf16, describe

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--out", default=str(RESULTS / "cpu_bf16.json"))
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    steps = step_seconds(args.rounds, args.steps)
    med = {k: statistics.median(v) for k, v in steps.items()}
    result = {"benchmark": "cpu_bf16", "machine": machine(), "load_average": os.getloadavg(),
              "cpu_bf16_unit": cpu_bf16(), "decision": describe("cpu"),
              "step_cpu_s": steps, "step_cpu_s_median": med, "speedup": med["fp32"] / med["bf16"],
              "matmul_gflops": matmul_gflops()}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"{result['cpu_bf16_unit'] or 'no bf16 unit'}: step {med['fp32']:.2f} s fp32, {med['bf16']:.2f} s bf16 "
          f"({result['speedup']:.2f}x); matmul {result['matmul_gflops']}; decision: {result['decision']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
