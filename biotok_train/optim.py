"""The one optimizer + schedule policy of pretraining and fine-tuning: LAMB (torch has none) or
AdamW, no weight decay on biases and LayerNorm, linear warm-up then linear or cosine decay.
Settings: :class:`biotok_train.config.OptimConfig`.

LAMB (You et al. 2019, "Large Batch Optimization for Deep Learning", Algorithm 2)::

    m = b1 m + (1 - b1) g            v = b2 v + (1 - b2) g²
    m̂ = m / (1 - b1^t)               v̂ = v / (1 - b2^t)
    r = m̂ / (sqrt(v̂) + eps) + wd w
    w = w - lr · φ(‖w‖) / ‖r‖ · r     with φ the identity; ratio 1 when ‖w‖ or ‖r‖ is 0

Biases and LayerNorm weights get no weight decay and no trust ratio (as Google's BERT LAMB:
``exclude_from_layer_adaptation`` defaults to the weight-decay exclusions).

Layer-wise learning-rate decay (ELECTRA's fine-tuning, used by ELECTRAMed): with ``L`` layers,
the embeddings are depth 0, encoder layer ``i`` depth ``i + 1`` and everything else (pooler,
task head, ALBERT's shared layer) depth ``L + 1``; a parameter at depth ``d`` gets
``lr * layer_decay ** (L + 1 - d)`` (:func:`layer_depth`).
"""

from __future__ import annotations

import math
import re
from typing import Iterable

import torch
from torch import nn

from biotok.errors import ConfigError
from biotok_train.config import PRETRAIN_LR, PRETRAIN_WARMUP, OptimConfig

NO_DECAY = ("bias", "LayerNorm.weight", "layer_norm.weight", "LayerNorm.bias", "norm.weight")


class Lamb(torch.optim.Optimizer):
    """LAMB with bias correction; per-group ``adapt`` switches the trust ratio on or off."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-6,
        weight_decay: float = 0.01,
        adapt: bool = True,
    ) -> None:
        if lr < 0 or eps < 0 or not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ConfigError("invalid LAMB hyper-parameters")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, adapt=adapt))

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[override]
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                dt = torch.float32 if p.dtype in (torch.float16, torch.bfloat16) else p.dtype
                g = p.grad.to(dt)
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p, dtype=dt)
                    state["exp_avg_sq"] = torch.zeros_like(p, dtype=dt)
                state["step"] += 1
                t = state["step"]
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                m_hat = m / (1 - b1**t)
                v_hat = v / (1 - b2**t)
                w = p.to(dt)
                r = m_hat / (v_hat.sqrt() + group["eps"])
                if group["weight_decay"]:
                    r = r.add(w, alpha=group["weight_decay"])
                ratio = 1.0
                if group["adapt"]:
                    w_norm, r_norm = w.norm(), r.norm()
                    ratio = torch.where(
                        (w_norm > 0) & (r_norm > 0), w_norm / r_norm, torch.ones_like(w_norm)
                    )
                p.add_((r * ratio * -group["lr"]).to(p.dtype))
        return loss


_LAYER = re.compile(r"\.layers?\.(\d+)\.")


def layer_depth(name: str, n_layers: int) -> int:
    """Depth of parameter ``name`` for layer-wise lr decay: 0 for embeddings, ``i + 1`` for
    encoder layer ``i`` (``...layer.i...``), ``n_layers + 1`` for the rest (pooler, head)."""
    if "embeddings" in name or "embedding_hidden_mapping_in" in name:
        return 0
    m = _LAYER.search(name)
    return int(m.group(1)) + 1 if m else n_layers + 1


def param_groups(model: nn.Module, weight_decay: float, layer_decay: float = 1.0) -> list[dict]:
    """Decayed matrices, and biases/LayerNorm without decay (nor LAMB adaptation); with
    ``layer_decay`` < 1 each of the two is split by depth, every group carrying its ``lr_scale``."""
    n_layers = int(getattr(getattr(model, "config", None), "num_hidden_layers", 0) or 0)
    groups: dict[tuple[bool, int], list] = {}
    seen: set[int] = set()
    for name, p in model.named_parameters():
        if not p.requires_grad or id(p) in seen:
            continue
        seen.add(id(p))
        plain = name.endswith(NO_DECAY) or p.ndim < 2
        depth = layer_depth(name, n_layers) if layer_decay < 1 else 0
        groups.setdefault((plain, depth), []).append(p)
    if layer_decay >= 1:
        groups.setdefault((False, 0), [])
        groups.setdefault((True, 0), [])
    out = []
    for (plain, depth), params in sorted(groups.items()):
        scale = layer_decay ** (n_layers + 1 - depth) if layer_decay < 1 else 1.0
        out.append({"params": params, "weight_decay": 0.0 if plain else weight_decay, "adapt": not plain,
                    "lr_scale": scale})
    return out


def build_optimizer(model: nn.Module, config: OptimConfig | str, lr: float | None = None) -> torch.optim.Optimizer:
    """``adamw`` (torch, fused on one CPU or CUDA device) or ``lamb`` as ``config`` says; decay excluded from biases
    and LayerNorm. ``config`` may also be just the optimizer name, with ``lr`` (other settings
    default; lr None: the pretraining default). An OptimConfig whose lr or warm-up is left None
    takes the pretraining defaults (:class:`~biotok_train.config.PretrainConfig` fills them in)."""
    if isinstance(config, str):
        config = OptimConfig(name=config, lr=lr)
    config = config.with_defaults(PRETRAIN_LR, PRETRAIN_WARMUP)
    groups = param_groups(model, config.weight_decay, config.layer_decay)
    for g in groups:
        g["lr"] = config.lr * g.pop("lr_scale")
    if config.name == "lamb":
        return Lamb(groups, lr=config.lr, betas=config.betas, eps=config.eps)
    for g in groups:
        g.pop("adapt")
    # fused on one CPU or CUDA device, as the Trainer's default adamw_torch_fused: on CPU, one
    # thread, a MiniLM-sized step measured 15 ms of CPU instead of 103 ms for the foreach kernels
    devices = {p.device.type for g in groups for p in g["params"]}
    fused = len(devices) == 1 and devices <= {"cpu", "cuda"} and ("cpu" in devices or torch.cuda.is_available())
    return torch.optim.AdamW(groups, lr=config.lr, betas=config.betas, eps=config.eps, fused=fused or None)


def lr_lambda(step: int, *, total: int, warmup: int, schedule: str) -> float:
    """Multiplier of the peak lr: linear warm-up to 1, then linear or cosine decay to 0."""
    if schedule not in ("linear", "cosine"):
        raise ConfigError(f"unknown schedule {schedule!r} (linear or cosine)")
    if warmup > 0 and step < warmup:
        return (step + 1) / warmup
    if total <= warmup:
        return 1.0
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    if schedule == "linear":
        return max(0.0, 1.0 - progress)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def warmup_steps(warmup: float, total: int) -> int:
    """``warmup`` below 1 is a fraction of the steps, otherwise a number of steps."""
    return int(round(warmup * total)) if 0 <= warmup < 1 else int(warmup)


def build_schedule(
    optimizer: torch.optim.Optimizer, *, total: int, warmup: float, schedule: str
) -> torch.optim.lr_scheduler.LambdaLR:
    """Warm-up over :func:`warmup_steps` then ``schedule`` decay to 0 at ``total`` steps."""
    w = warmup_steps(warmup, total)
    lr_lambda(0, total=total, warmup=w, schedule=schedule)  # validate the name now
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: lr_lambda(s, total=total, warmup=w, schedule=schedule)
    )


def build(
    model: nn.Module, config: OptimConfig, total: int
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
    """The optimizer and its schedule over ``total`` steps: what a training loop needs."""
    config = config.with_defaults(PRETRAIN_LR, PRETRAIN_WARMUP)
    optimizer = build_optimizer(model, config)
    return optimizer, build_schedule(optimizer, total=total, warmup=config.warmup, schedule=config.schedule)


def clip_and_step(
    model: nn.Module, optimizer: torch.optim.Optimizer, scheduler, max_grad_norm: float
) -> torch.Tensor | None:
    """Clip the gradient norm (when ``max_grad_norm`` > 0), step, advance the schedule, zero grads.

    Returns the gradient norm before clipping (None without clipping).
    """
    norm = None
    if max_grad_norm > 0:
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm).detach().float()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return norm
