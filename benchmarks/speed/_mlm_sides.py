"""The two sides of the MLM throughput comparison, shared by ``benchmarks.speed.pretrain_throughput``
and the GPU suite's throughput step: biotok's loop (what ``biotok-train mlm`` runs) and a plain HF
``Trainer`` + ``DataCollatorForLanguageModeling`` on the same packed data, model and seed.

``args``: size, steps, skip (untimed first steps), batch_size, compile, device.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch

from biotok_train.config import OptimConfig, PretrainConfig
from biotok_train.hf_models import save_hf_tokenizer
from biotok_train.pretrain.loop import pretrain
from biotok_train.pretrain.models import Vocab, build
from biotok_train.pretrain.packed import PackedData


def ours(data: Path, args, out: Path) -> dict:
    cfg = PretrainConfig(size=args.size, steps=args.steps, batch_size=args.batch_size, optim=OptimConfig(lr=1e-4, warmup=0.0),
                         seed=0, bf16=True, compile=args.compile, log_every=1, device=args.device)
    r = pretrain(data, cfg, out, progress=False)
    rows = [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines()]
    a, b = rows[args.skip - 1], rows[-1]
    tps = (b["tokens"] - a["tokens"]) / (b["time"] - a["time"])
    return {"tokens_per_s": tps, "final_loss": r.final_loss, "params": r.num_params}


class _Timer:
    """A TrainerCallback that stamps the end of every step."""

    def __init__(self):
        from transformers import TrainerCallback

        stamps = self.stamps = []

        class CB(TrainerCallback):
            def on_step_end(self, args, state, control, **kw):
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                stamps.append(time.perf_counter())

        self.callback = CB()


def hf_trainer(data: Path, args, work: Path) -> dict:
    from transformers import (AutoTokenizer, DataCollatorForLanguageModeling, Trainer, TrainingArguments)

    packed = PackedData(data)
    save_hf_tokenizer(data / "tokenizer", work / "tok", seq_len=packed.seq_len)
    tok = AutoTokenizer.from_pretrained(work / "tok")
    torch.manual_seed(0)
    vocab = Vocab(packed.vocab_size, packed.pad_id, packed.cls_id, packed.sep_id, packed.mask_id)
    model = build("mlm", "bert", args.size, vocab, packed.seq_len).model

    class DS(torch.utils.data.Dataset):
        def __len__(self):
            return len(packed)

        def __getitem__(self, i):
            b = packed.batch([i])
            return {"input_ids": b.input_ids[0], "token_type_ids": b.token_type_ids[0],
                    "attention_mask": b.attention_mask[0]}

    cuda = torch.cuda.is_available() and args.device != "cpu"
    targs = TrainingArguments(
        output_dir=str(work / "hf"), per_device_train_batch_size=args.batch_size, max_steps=args.steps,
        learning_rate=1e-4, warmup_steps=0, bf16=cuda, logging_steps=10_000, save_strategy="no",
        report_to=[], dataloader_num_workers=0, seed=0, torch_compile=args.compile, use_cpu=not cuda,
        disable_tqdm=True,
    )
    timer = _Timer()
    trainer = Trainer(model=model, args=targs, train_dataset=DS(),
                      data_collator=DataCollatorForLanguageModeling(tok, mlm_probability=0.15),
                      callbacks=[timer.callback])
    trainer.train()
    s = timer.stamps
    tokens = args.batch_size * packed.seq_len * (len(s) - args.skip)
    return {"tokens_per_s": tokens / (s[-1] - s[args.skip - 1])}


__all__ = ["hf_trainer", "ours"]
