"""Step 1, equivalence: bf16, SDPA attention, ``torch.compile`` and packed rows against the fp32
eager reference, for BERT, ALBERT and ELECTRA, and a few steps of the real loop."""

from __future__ import annotations

import contextlib
import functools
import math
from pathlib import Path
from typing import Sequence

from benchmarks.speed.gpu_suite.config import TOLERANCES, SuiteConfig
from benchmarks.speed.gpu_suite.results import StepResult
from biotok_train.pretrain.compiled import root_cause


@contextlib.contextmanager
def fixed_gumbel_noise(vocab_size: int, seed: int = 0):
    """ELECTRA's replacement sampling with one fixed Gumbel vector over the vocabulary.

    Eager and compiled kernels draw different random numbers, and a row run alone draws other
    numbers than the same row in a batch; with the noise fixed per vocabulary entry, every
    variant replaces the same tokens, so their losses are comparable.
    """
    import torch

    from biotok_train.pretrain import electra

    g = torch.Generator().manual_seed(seed)
    u = torch.rand(vocab_size, generator=g, dtype=torch.float64).clamp(1e-9, 1 - 1e-7)
    noise = (-torch.log(-torch.log(u))).float()
    original = electra.gumbel_sample

    def sample(logits, generator=None):
        return (logits.float() + noise.to(logits.device)).argmax(dim=-1)

    electra.gumbel_sample = sample
    try:
        yield
    finally:
        electra.gumbel_sample = original


def _set_attention(module, impl: str) -> None:
    """Switch every transformers model inside ``module`` to ``impl`` attention ('eager' or 'sdpa')."""
    for m in module.modules():
        if hasattr(m, "set_attn_implementation") and hasattr(m, "config"):
            m.set_attn_implementation(impl)


def fixed_batches(data: Path, count: int, batch_size: int, arch: str, seed: int = 0) -> list[dict]:
    """``count`` masked batches of the prepared data, the same for every variant (CPU tensors)."""
    from biotok_train.pretrain.masking import mask_tokens
    from biotok_train.pretrain.packed import PackedData

    import torch

    packed = PackedData(data)
    electra = arch == "electra"
    out = []
    for k in range(count):
        b = packed.batch(packed.indices(k * batch_size, batch_size, seed), sop=arch == "albert", seed=seed)
        m = mask_tokens(b.input_ids, b.word_starts, b.special, mask_id=packed.mask_id, vocab_size=packed.vocab_size,
                        prob=0.15, wwm=False, mask_frac=0.85 if electra else 0.8, random_frac=0.0 if electra else 0.1,
                        generator=torch.Generator().manual_seed(seed * 1000 + k))
        out.append({"input_ids": m.input_ids, "attention_mask": b.attention_mask, "token_type_ids": b.token_type_ids,
                    "labels": m.labels, "sop_labels": b.sop_labels, "original_ids": b.input_ids})
    return out


def _to(batch: dict, device) -> dict:
    return {k: v.to(device) for k, v in batch.items()}


def _trajectory(module, state: dict, batches: list[dict], device, steps: int, lr: float, *, attention: str,
                bf16: bool, compile_backend: str | None) -> list[float]:
    """Losses of ``steps`` AdamW steps from ``state`` over ``batches`` (cycled), dropout off."""
    import torch

    module.load_state_dict(state)
    module.eval()  # no dropout: the variants must see the same function
    _set_attention(module, attention)
    opt = torch.optim.AdamW(module.parameters(), lr=lr, weight_decay=0.0)
    fn = module
    if compile_backend:
        torch._dynamo.reset()
        fn = torch.compile(module, backend=compile_backend)
    from biotok_train.pretrain.feed import static_positions

    losses = []
    for s in range(steps):
        batch = batches[s % len(batches)]
        batch = {**batch, "positions": static_positions(batch["labels"])}  # the loop's static-shape path
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            out = fn(**_to(batch, device))
        out["loss"].backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(out["loss"].detach().float()))
    return losses


def _rows(batch: dict, lengths: Sequence[int], pad_id: int) -> dict:
    """The batch with row r cut to ``lengths[r]`` tokens and padded back to full length."""
    b = {k: v.clone() for k, v in batch.items()}
    for r, n in enumerate(lengths):
        b["input_ids"][r, n:] = pad_id
        b["original_ids"][r, n:] = pad_id
        b["attention_mask"][r, n:] = 0
        b["token_type_ids"][r, n:] = 0
        b["labels"][r, n:] = -100
    return b


def _packed_hidden(module, padded: dict, lengths: Sequence[int], device) -> float:
    """Largest difference of the encoder's last hidden states at real positions, padded batch vs
    each row alone, relative to their largest magnitude. (At initialisation attention is nearly
    uniform, so a padding leak barely moves the loss; the hidden states show it.)"""
    import torch

    from biotok_train.pretrain.models import main_model

    enc = main_model(module).base_model
    keys = ("input_ids", "attention_mask", "token_type_ids")
    with torch.no_grad():
        h = enc(**_to({k: padded[k] for k in keys}, device))[0].float()
        worst, scale = 0.0, 0.0
        for r, n in enumerate(lengths):
            alone = enc(**_to({k: padded[k][r : r + 1, :n] for k in keys}, device))[0].float()[0]
            worst = max(worst, float((h[r, :n] - alone).abs().max()))
            scale = max(scale, float(alone.abs().max()))
    return worst / max(scale, 1e-12)


def _packed_losses(module, state: dict, batch: dict, lengths: Sequence[int], pad_id: int, device,
                   arch: str) -> tuple[float, float]:
    """(loss of the padded batch, the same loss recombined from each row run alone, unpadded)."""
    import torch

    module.load_state_dict(state)
    module.eval()
    _set_attention(module, "sdpa")
    padded = _rows(batch, lengths, pad_id)
    with torch.no_grad():
        whole = float(module(**_to(padded, device))["loss"])
        mlm_num = mlm_den = other_num = other_den = 0.0
        for r, n in enumerate(lengths):
            row = {k: (v[r : r + 1, :n] if v.dim() == 2 else v[r : r + 1]) for k, v in padded.items()}
            out = module(**_to(row, device))
            masked = float((row["labels"] != -100).sum())
            if masked:  # a row without a masked token has no MLM term
                mlm_num += float(out["mlm_loss"]) * masked
                mlm_den += masked
            if arch == "albert":  # sentence-order loss: a mean over rows
                other_num, other_den = other_num + float(out["sop_loss"]), other_den + 1
            elif arch == "electra":  # replaced-token loss: a mean over real tokens
                other_num, other_den = other_num + float(out["rtd_loss"]) * n, other_den + n
    joined = mlm_num / mlm_den
    if arch == "albert":
        joined += other_num / other_den
    elif arch == "electra":
        joined += module.rtd_weight * other_num / other_den
    return whole, joined


def loop_smoke(data: Path, work: Path, device, compile_: bool, backend: str = "inductor") -> list[dict]:
    """A few steps of the real loop (``pretrain``) per objective, bf16 and ``--compile`` as on a GPU run.

    The checks above drive the modules directly; this runs what ``biotok-train mlm/electra``
    runs, so a loop-only failure (e.g. a kernel that ``torch.compile`` cannot trace) shows too.
    """
    from biotok_train.config import OptimConfig, PretrainConfig
    from biotok_train.precision import use_bf16
    from biotok_train.pretrain.loop import pretrain

    rows = []
    for objective, arch in (("mlm", "bert"), ("mlm", "albert"), ("electra", "bert")):
        name = "electra" if objective == "electra" else arch
        cfg = PretrainConfig(objective=objective, arch=arch, size="tiny", steps=3, batch_size=4,
                             optim=OptimConfig(warmup=0.0), compile="on" if compile_ else "off", bf16=True,
                             compile_backend=backend, log_every=1, device=str(device))
        row = {"arch": name, "steps": 3, "compile": compile_ and backend, "bf16": use_bf16(device), "error": None}
        try:
            res = pretrain(data, cfg, work / f"smoke-{name}", progress=False, force=True)  # a kept --work
            row.update(losses=res.losses, passed=all(math.isfinite(l) for l in res.losses))
        except Exception as e:  # reported, not raised: the other objectives still run
            row.update(losses=None, passed=False, error=root_cause(e)[:600])
        rows.append(row)
    return rows


VARIANTS = {  # each compared with the fp32 eager reference
    "sdpa": dict(attention="sdpa", bf16=False, compile=False),
    "bf16": dict(attention="sdpa", bf16=True, compile=False),
    "compile": dict(attention="sdpa", bf16=False, compile=True),
    "bf16+compile": dict(attention="sdpa", bf16=True, compile=True),
}


def check_equivalence(cfg: SuiteConfig, data: Path, device, work: Path | None = None) -> StepResult:
    """fp32 eager vs SDPA, bf16, compile, bf16+compile (trajectories) and packed rows, per architecture."""
    import torch

    from biotok_train.pretrain.packed import PackedData

    packed = PackedData(data)
    checks: list[dict] = []
    skipped: list[dict] = []
    L = packed.seq_len
    # row lengths L, ..., L/n: padding (and its attention mask) goes through every variant
    lengths = [L] + [max(8, L * (cfg.check_batch_size - k) // cfg.check_batch_size)
                     for k in range(1, cfg.check_batch_size)]
    for arch in ("bert", "albert", "electra"):
        checks += _check_arch(cfg, data, packed, arch, lengths, device, skipped)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    ran = [c for c in checks if not c["skipped"]]
    failed = [f"{c['arch']} {c['variant']}" for c in ran if not c["passed"]]
    smoke = []
    if work is not None:
        # the loop compiled with the checks' backend (aot_eager on a dry run: inductor compiles for minutes on a CPU)
        smoke = loop_smoke(data, work, device, True, cfg.compile_backend)
        failed += [f"loop {r['arch']}" for r in smoke if not r["passed"]]
    notes = []
    if cfg.compile_backend != "inductor":
        notes.append(f"torch.compile used the {cfg.compile_backend!r} backend (graph capture and AOT autograd "
                     "without inductor code generation)")
    return StepResult(
        status="failed" if failed else "passed", why=("failed: " + ", ".join(failed)) if failed else None,
        data={"size": cfg.check_size, "batches": cfg.check_batches, "batch_size": cfg.check_batch_size,
              "train_steps": cfg.check_steps, "lr": cfg.check_lr, "seq_len": packed.seq_len, "row_lengths": lengths,
              "tolerances": TOLERANCES, "compile_backend": cfg.compile_backend, "notes": notes,
              "skipped": skipped, "checks": checks, "loop_smoke": smoke})


def _check_arch(cfg: SuiteConfig, data: Path, packed, arch: str, lengths: list[int], device,
                skipped: list[dict]) -> list[dict]:
    """One architecture: each variant's trajectory against the reference, then the packed rows."""
    import torch

    from biotok_train.pretrain.models import Vocab, build

    vocab = Vocab(packed.vocab_size, packed.pad_id, packed.cls_id, packed.sep_id, packed.mask_id)
    bf16_ok = device.type == "cuda" and torch.cuda.is_bf16_supported() or device.type == "cpu"
    objective, model_arch = ("electra", "bert") if arch == "electra" else ("mlm", arch)
    torch.manual_seed(0)
    module = build(objective, model_arch, cfg.check_size, vocab, packed.seq_len).to(device)
    state = {k: v.detach().clone() for k, v in module.state_dict().items()}
    full = fixed_batches(data, cfg.check_batches, cfg.check_batch_size, arch)
    batches = [_rows(b, lengths, packed.pad_id) for b in full]
    run = functools.partial(_trajectory, module, state, batches, device, cfg.check_steps, cfg.check_lr)
    checks = []
    with fixed_gumbel_noise(packed.vocab_size) if arch == "electra" else contextlib.nullcontext():
        ref = run(attention="eager", bf16=False, compile_backend=None)
        for name, v in VARIANTS.items():
            kw = dict(attention=v["attention"], bf16=v["bf16"], compile_backend=cfg.compile_backend if v["compile"] else None)
            row = {"arch": arch, "variant": name, "reference": "fp32 eager attention", "tolerance": TOLERANCES[name],
                   "reference_losses": ref, "skipped": None, "error": None,
                   "settings": {"attention": kw["attention"], "bf16_autocast": kw["bf16"],
                                "compile_backend": kw["compile_backend"]}}
            if kw["bf16"] and not bf16_ok:
                row.update(skipped=f"{device} has no bf16 support", passed=None, max_rel_diff=None, losses=None)
                skipped.append({"what": f"{arch} {name}", "why": row["skipped"]})
            else:
                row.update(_compare(ref, run, kw, TOLERANCES[name]))
            checks.append(row)
        checks.append(_packed_check(module, state, full[0], lengths, packed.pad_id, device, arch))
    return checks


def _compare(ref: list[float], run, kw: dict, tolerance: float) -> dict:
    """A variant's losses and largest relative difference from ``ref``; a variant that does not run
    is a failed check, with its reason."""
    try:
        losses = run(**kw)
    except Exception as e:  # reported in the check, not raised: the other variants still run
        return {"error": root_cause(e)[:600], "passed": False,
                "max_rel_diff": None, "losses": None}
    diff = max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(ref, losses))
    return {"losses": losses, "max_rel_diff": diff, "passed": bool(math.isfinite(diff) and diff <= tolerance)}


def _packed_check(module, state: dict, batch: dict, lengths: list[int], pad_id: int, device, arch: str) -> dict:
    """The packed-rows check: loss and hidden states of the padded batch vs each row alone."""
    whole, joined = _packed_losses(module, state, batch, lengths, pad_id, device, arch)
    loss_diff = abs(whole - joined) / max(abs(joined), 1e-12)
    hidden_diff = _packed_hidden(module, _rows(batch, lengths, pad_id), lengths, device)
    diff = max(loss_diff, hidden_diff)
    return {"arch": arch, "variant": "packed", "tolerance": TOLERANCES["packed"],
            "reference": "each row alone, unpadded (fp32, sdpa)", "row_lengths": lengths,
            "padded_loss": whole, "rows_alone_loss": joined, "loss_rel_diff": loss_diff,
            "hidden_rel_diff": hidden_diff, "max_rel_diff": diff,
            "passed": bool(diff <= TOLERANCES["packed"]), "skipped": None, "error": None}
