"""The model side: resize the embeddings, the tied output layer and the MLM bias, and fill each
row as the plan says; shift RoBERTa-style position rows; set the new special ids in the config."""

from __future__ import annotations

from biotok.tokenizer import BiotokTokenizer
from biotok_train.transfer.common import TransferError
from biotok_train.transfer.fvt import TransferPlan


def random_rows(n: int, dim: int, std: float, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randn((n, dim), generator=g, dtype=torch.float32) * std


def rebuild(model, plan: TransferPlan, new_size: int, random_rows, check_old: int) -> None:
    """Resize ``model``'s vocabulary to ``new_size`` and fill rows and bias per ``plan``."""
    import torch

    old_emb = model.get_input_embeddings().weight.detach().float().clone()
    out = model.get_output_embeddings()
    tied = out is not None and out.weight is model.get_input_embeddings().weight
    old_out = None if out is None or tied else out.weight.detach().float().clone()
    old_bias = None if out is None or getattr(out, "bias", None) is None else out.bias.detach().float().clone()
    if check_old > old_emb.shape[0]:
        raise TransferError(
            f"the model has {old_emb.shape[0]} embedding rows but its tokenizer {check_old} ids: "
            "they do not belong together"
        )
    dim = old_emb.shape[1]
    new_emb = torch.zeros((new_size, dim), dtype=torch.float32)
    new_out = None if old_out is None else torch.zeros((new_size, old_out.shape[1]), dtype=torch.float32)
    new_bias = None if old_bias is None else torch.zeros(new_size, dtype=torch.float32)
    r = 0
    for i, (kind, src) in enumerate(zip(plan.kinds, plan.sources)):
        if kind == "random":
            new_emb[i] = random_rows[r]
            if new_out is not None:
                new_out[i] = random_rows[r]
            r += 1
            continue
        idx = torch.tensor(src, dtype=torch.long)
        new_emb[i] = old_emb[idx].mean(0) if len(src) > 1 else old_emb[src[0]]
        if new_out is not None:
            new_out[i] = old_out[idx].mean(0) if len(src) > 1 else old_out[src[0]]
        if new_bias is not None:
            new_bias[i] = old_bias[idx].mean(0) if len(src) > 1 else old_bias[src[0]]
    model.resize_token_embeddings(new_size, mean_resizing=False)
    with torch.no_grad():
        emb = model.get_input_embeddings()
        emb.weight.copy_(new_emb.to(emb.weight.dtype))
        out = model.get_output_embeddings()
        if out is not None:
            if new_out is not None:
                out.weight.copy_(new_out.to(out.weight.dtype))
            if new_bias is not None and getattr(out, "bias", None) is not None:
                out.bias.copy_(new_bias.to(out.bias.dtype))
    if tied:
        model.tie_weights()


def shift_positions(model, old_pad: int | None, new_pad: int) -> None:
    """RoBERTa-style embeddings number positions from pad+1: keep each position's row."""
    import torch

    base = getattr(model, model.base_model_prefix, model)
    emb = getattr(base, "embeddings", None)
    if emb is None or not hasattr(emb, "create_position_ids_from_input_ids") or old_pad is None:
        if emb is not None and hasattr(emb, "padding_idx"):
            emb.padding_idx = new_pad
        return
    emb.padding_idx = new_pad
    if old_pad == new_pad:
        return
    pos = emb.position_embeddings
    old = pos.weight.detach().clone()
    n, dim = old.shape
    real = n - (old_pad + 1)  # real positions the model knows
    size = new_pad + 1 + real
    new = torch.zeros((size, dim), dtype=old.dtype)
    new[new_pad + 1:] = old[old_pad + 1:]
    new[new_pad] = old[old_pad]
    keep = min(new_pad, old_pad)
    new[:keep] = old[:keep]
    if size != n:
        pos_new = torch.nn.Embedding(size, dim, padding_idx=new_pad, dtype=old.dtype)
        emb.position_embeddings = pos_new
        model.config.max_position_embeddings = size
        emb.register_buffer("position_ids", torch.arange(size).expand((1, -1)), persistent=False)
        if hasattr(emb, "token_type_ids"):
            emb.register_buffer("token_type_ids", torch.zeros((1, size), dtype=torch.long), persistent=False)
    with torch.no_grad():
        emb.position_embeddings.weight.copy_(new)
    emb.position_embeddings.padding_idx = new_pad


def set_config_ids(model, new: BiotokTokenizer) -> None:
    cfg = model.config
    cfg.pad_token_id = new.pad_id
    bos = new.special_id("bos") if new.special_id("bos") is not None else new.cls_id
    eos = new.special_id("eos") if new.special_id("eos") is not None else new.sep_id
    cfg.bos_token_id = bos
    cfg.eos_token_id = eos
