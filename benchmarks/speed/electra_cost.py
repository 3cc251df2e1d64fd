"""Why ELECTRA-small trains at 1 % MFU on an H200 while BERT-small reaches 6-9 % (issue 38, item 4).

    python -m benchmarks.speed.electra_cost            # small models, CPU, ~1 min; writes results/electra_cost.json
    python -m benchmarks.speed.electra_cost --size tiny --no-write

The H200 rows of 2026-11-28 (``../shared/gpu/h200-2026-11-28/small-*.jsonl``, batch 64 x 128,
median of the rows after compilation) give the step times quoted in :data:`H200_MS_PER_STEP`:
ELECTRA-small's compiled step takes 5.0x BERT-small's, for 0.8x its FLOPs per token. So its step
is not bound by arithmetic. This counts, on the CPU, what one training step of each model asks
of the device, from the loop's own modules (:func:`biotok_train.pretrain.models.build`):

* FLOPs per token (:func:`biotok_train.pretrain.flops.module_flops_per_token`: the MFU formula
  counts the generator AND the discriminator, so the MFU is not understated by counting one model);
* encoder layers run per step (BERT-small 4; ELECTRA-small 12 discriminator + 12 generator) and
  the operators dispatched by forward + backward + optimizer step (each a kernel launch in eager
  mode; inductor fuses the elementwise ones, but not the matmuls and attention, one per layer);
* the graphs and graph breaks ``torch._dynamo.explain`` finds in the forward (a break would cut the
  compiled step in pieces with Python between them), and whether the step reads anything back to
  the host (``.item()``, ``nonzero``: a device sync per step).

Verdict (``results/electra_cost.json``, small models at 128 with CamemBERTa's 32k vocabulary):
ELECTRA-small has 0.78x BERT-small's FLOPs per token but runs 6x its layers (12 + 12 against 4,
of width 256 and 80 against 512), 5.5x its operators per step and 5.8x its matmul and attention
calls; its compiled H200 step took 5.0x as long. The step time follows the kernel count, not the
FLOPs: the GPU mostly waits on the launches of many tiny kernels, which is what CUDA graphs remove
(``gpu_suite/slot_speed.py`` measures ELECTRA with ``reduce-overhead``). The MFU formula is not the
cause (it counts both models), nor are graph breaks (dynamo finds one graph, no break, in each
forward). The only host syncs are transformers' SDPA mask check (``padding_mask.all()``, once per
encoder: 1 for BERT, 2 for ELECTRA) and run in eager mode only; compiled, the forward is one graph.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from benchmarks._common import RESULTS

# ms per optimizer step on one H200 (2026-11-28, batch 64 x 128, median of the rows after the first:
# 8,192 tokens / median tokens/s of ../shared/gpu/h200-2026-11-28/small-*.jsonl)
H200_MS_PER_STEP = {"bert-small eager": 17.6, "bert-small compiled": 12.0, "bert-small CUDA graphs": 8.8,
                    "electra-small compiled": 60.2}
VOCAB = 32005  # CamemBERTa's vocabulary, as in the H200 runs


def _batch(batch: int, seq: int, vocab: int, seed: int = 0) -> dict:
    """Inputs as the loop builds them: packed rows, 15 % of the non-special positions predicted,
    padded to a position bucket (:func:`biotok_train.pretrain.feed.static_positions`)."""
    import torch

    from biotok_train.pretrain.feed import static_positions

    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (batch, seq), generator=g)
    ids[:, 0], ids[:, -1] = 1, 2  # [CLS] ... [SEP]
    pick = torch.rand(batch, seq, generator=g) < 0.15
    pick[:, 0] = pick[:, -1] = False
    labels = torch.where(pick, ids, torch.full_like(ids, -100))
    masked = torch.where(pick, torch.full_like(ids, 4), ids)
    return dict(input_ids=masked, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids),
                labels=labels, original_ids=ids, positions=static_positions(labels))


def _module(objective: str, size: str, seq: int, vocab: int):
    from biotok_train.pretrain.models import Vocab, build

    return build(objective, "bert", size, Vocab(vocab, 0, 1, 2, 4), seq)


def count_ops(module, inputs: dict) -> dict:
    """Operators dispatched by one training step (forward, backward, clipping, AdamW step; the second
    step, after the optimizer's state is made), by name, and the ones that read a tensor back to the host."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from biotok_train.config import OptimConfig
    from biotok_train.optim import build, clip_and_step

    opt, sched = build(module, OptimConfig(lr=1e-4), 10)
    ops: Counter = Counter()

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            ops[str(func.overloadpacket.__name__)] += 1
            return func(*args, **(kwargs or {}))

    module.train()
    module(**inputs)["loss"].backward()
    clip_and_step(module, opt, sched, 1.0)
    with Count():
        loss = module(**inputs)["loss"]
        loss.backward()
        clip_and_step(module, opt, sched, 1.0)
    syncs = {k: v for k, v in ops.items() if k in ("item", "_local_scalar_dense", "nonzero", "is_nonzero")}
    matmuls = sum(v for k, v in ops.items() if k in ("mm", "addmm", "bmm", "baddbmm", "matmul",
                                                     "_scaled_dot_product_flash_attention_for_cpu",
                                                     "_scaled_dot_product_efficient_attention",
                                                     "_scaled_dot_product_flash_attention"))
    return {"ops": sum(ops.values()), "matmul_and_attention_ops": matmuls, "host_syncs": syncs,
            "top": dict(ops.most_common(8))}


def explain(module, inputs: dict) -> dict:
    """Graphs and graph breaks dynamo finds in the forward (no compilation: tracing only)."""
    import torch

    e = torch._dynamo.explain(module)(**inputs)
    torch._dynamo.reset()
    return {"graphs": e.graph_count, "graph_breaks": e.graph_break_count,
            "break_reasons": [str(b.reason)[:200] for b in e.break_reasons][:5]}


def layers(module) -> dict:
    """Encoder layers and their widths, per model."""
    if hasattr(module, "discriminator"):
        d, g = module.discriminator.config, module.generator.config
        return {"discriminator": [d.num_hidden_layers, d.hidden_size], "generator": [g.num_hidden_layers, g.hidden_size],
                "layers": d.num_hidden_layers + g.num_hidden_layers}
    c = module.model.config
    return {"bert": [c.num_hidden_layers, c.hidden_size], "layers": c.num_hidden_layers}


def measure(size: str = "small", seq: int = 128, vocab: int = VOCAB, batch: int = 2) -> dict:
    """The counts for BERT (MLM) and ELECTRA of ``size``, and what they predict against the H200's times."""
    import torch

    from biotok_train.pretrain.flops import module_flops_per_token

    torch.manual_seed(0)
    out: dict = {"size": size, "seq_len": seq, "vocab": vocab, "batch_counted": batch, "models": {}}
    for name, objective in (("bert", "mlm"), ("electra", "electra")):
        module = _module(objective, size, seq, vocab)
        inputs = _batch(batch, seq, vocab)
        out["models"][name] = {"flops_per_token": module_flops_per_token(module, seq, 0.15), **layers(module),
                               "step": count_ops(module, inputs), "dynamo": explain(module, inputs)}
    b, e = out["models"]["bert"], out["models"]["electra"]
    out["electra_over_bert"] = {
        "flops_per_token": round(e["flops_per_token"] / b["flops_per_token"], 3),
        "layers": round(e["layers"] / b["layers"], 2),
        "ops_per_step": round(e["step"]["ops"] / b["step"]["ops"], 2),
        "matmul_and_attention_ops": round(e["step"]["matmul_and_attention_ops"] / b["step"]["matmul_and_attention_ops"], 2),
        "h200_compiled_step_time": round(H200_MS_PER_STEP["electra-small compiled"]
                                         / H200_MS_PER_STEP["bert-small compiled"], 2),
    }
    out["h200_ms_per_step"] = H200_MS_PER_STEP
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.speed.electra_cost", description=__doc__.split("\n")[0])
    p.add_argument("--size", default="small", choices=("tiny", "small"))
    p.add_argument("--write", action=argparse.BooleanOptionalAction, default=True,
                   help="write benchmarks/results/electra_cost.json (small only)")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    r = measure(args.size)
    r["command"] = "python -m benchmarks.speed.electra_cost" + ("" if args.size == "small" else f" --size {args.size}")
    text = json.dumps(r, indent=1) + "\n"
    if args.write and args.size == "small":
        (RESULTS / "electra_cost.json").write_text(text, encoding="utf-8")
    sys.stdout.write(json.dumps(r["electra_over_bert"], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
