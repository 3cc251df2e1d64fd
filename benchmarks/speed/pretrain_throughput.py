"""Tokens/s of ``biotok-train mlm`` (our loop) vs a plain HF ``Trainer`` + ``DataCollatorForLanguageModeling``.

Same model (BertForMaskedLM from the same config and seed), same packed data, same batch size,
same number of steps, in one process; the first ``--skip`` steps (warm-up, compilation) are not
timed on either side. Prints both figures and the ratio, and writes a JSON.

    python -m benchmarks.speed.pretrain_throughput --size tiny --steps 30 --batch-size 16          # CPU
    python -m benchmarks.speed.pretrain_throughput --size base --steps 60 --batch-size 32 --compile  # GPU
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
from pathlib import Path

import torch

from benchmarks import corpora as C
from benchmarks.speed._mlm_sides import hf_trainer, ours  # noqa: E402
from biotok_train.pretrain.packed import PackedData  # noqa: E402
from biotok_train.config import SIZES  # noqa: E402
from biotok_train.pretrain.flops import flops_per_token, mfu, peak_tflops  # noqa: E402
from biotok_train.config import PrepareConfig  # noqa: E402
from biotok_train.pretrain.prepare import prepare  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, help="prepared data dir (default: prepare the sample corpus)")
    ap.add_argument("--tokenizer", default=str(C.CAMEMBERTA))
    ap.add_argument("--corpus", default=str(C.SAMPLE))
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--skip", type=int, default=5, help="untimed first steps")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=None, help="CPU threads (torch.set_num_threads)")
    ap.add_argument("--json", type=Path, default=Path("pretrain_throughput.json"))
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = args.data or prepare([args.corpus], args.tokenizer, PrepareConfig(seq_len=args.seq_len), work / "data",
                                      progress=False).path
        a = ours(data, args, work / "ours")
        b = hf_trainer(data, args, work)
        packed = PackedData(data)
    device = torch.cuda.get_device_name() if torch.cuda.is_available() and args.device != "cpu" else \
        f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    peak = peak_tflops(device) if "CPU" not in device else None
    layers, hidden, _, inter, _ = SIZES["bert"][args.size]
    per_token = flops_per_token(layers, hidden, inter, packed.seq_len, packed.vocab_size, predicted_fraction=0.15)
    ratio = a["tokens_per_s"] / b["tokens_per_s"]
    result = {
        "device": device, "size": args.size, "seq_len": packed.seq_len,
        "batch_size": args.batch_size, "steps": args.steps, "timed_steps": args.steps - args.skip,
        "compile": args.compile, "params": a["params"],
        "biotok_tokens_per_s": a["tokens_per_s"], "hf_trainer_tokens_per_s": b["tokens_per_s"],
        "ratio": ratio,
        "biotok_mfu": mfu(a["tokens_per_s"], per_token, peak), "hf_mfu": mfu(b["tokens_per_s"], per_token, peak),
        "torch": torch.__version__,
    }
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    pct = lambda x: f"{100 * x:.1f} %" if x is not None else "n/a"  # noqa: E731
    print(f"device            {device}")
    print(f"model             bert-{args.size}, {a['params'] / 1e6:.1f} M params, batch {args.batch_size} x {result['seq_len']}")
    print(f"biotok-train mlm  {a['tokens_per_s']:>12,.0f} tokens/s   MFU {pct(result['biotok_mfu'])}")
    print(f"HF Trainer        {b['tokens_per_s']:>12,.0f} tokens/s   MFU {pct(result['hf_mfu'])}")
    print(f"ratio             {ratio:.2f}x   -> {args.json}")


if __name__ == "__main__":
    main()
