"""Model FLOPs utilization (MFU): the one FLOPs-per-token formula and the one GPU peak table,
used by the pretraining loop (``mfu`` in its metrics and result) and by the benchmarks
(``benchmarks/gpu_suite``, ``benchmarks/speed/pretrain_throughput.py``).

MFU = tokens/s × training FLOPs per token / peak FLOP/s. The FLOPs per token count the
matmuls only (PaLM, appendix B): 6 per dense weight (forward + backward), 12·L·d·s for the
attention scores and values, and the output head only where a loss is defined. Torch-free.
"""

from __future__ import annotations

from typing import Any

# Dense bf16 tensor-core peak TFLOP/s (FP32 accumulate, *without* the 2:4 sparsity that the
# datasheets' headline numbers assume, i.e. half of them), by device-name substring,
# case-insensitive, first match wins (so "H100 PCIe" before "H100", "A100" before "A10",
# "L40S" before "L40" before "L4"). From NVIDIA's datasheets: H100 SXM 989 (1,979 sparse),
# H100 PCIe 756 (1,513), H100 NVL / H200 NVL 835 (1,671), H200 SXM 989, B200 2,250, A100 312,
# L40S 362, L40 181, L4 121, A10 125 (250), RTX A6000 155, RTX 4090 165, RTX 3090 71 (GeForce:
# half-rate FP32 accumulate). The A10G (AWS G5, a variant of the A10) has no datasheet of its own
# and third-party figures disagree (62.5 to 125): it gets the A10's datasheet 125, the
# conservative choice (an MFU never above what a lower guess would report; the GPU suite had 70).
# V100 and T4 have no bf16 tensor cores: their fp16 peak is listed (MFU against it is optimistic).
PEAK_BF16_TFLOPS: tuple[tuple[str, float], ...] = (
    ("B200", 2250.0), ("GH200", 989.0), ("H200 NVL", 835.0), ("H200", 989.0), ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0), ("H100", 989.0), ("H800", 989.0), ("A100", 312.0), ("A800", 312.0),
    ("L40S", 362.0), ("L40", 181.0), ("L4", 121.0), ("A10", 125.0), ("A6000", 155.0),
    ("4090", 165.0), ("3090", 71.0), ("V100", 125.0), ("T4", 65.0),
)


def peak_tflops(device_name: str) -> float | None:
    """Dense bf16 peak TFLOP/s of a GPU from its name (``torch.cuda.get_device_name``); None if unknown."""
    for key, tflops in PEAK_BF16_TFLOPS:
        if key.lower() in device_name.lower():
            return tflops
    return None


def flops_per_token(layers: int, hidden: int, intermediate: int, seq_len: int, vocab_size: int,
                    predicted_fraction: float = 1.0, embedding_size: int | None = None,
                    head_width: int | None = None) -> float:
    """Training FLOPs per token of a BERT-like encoder: 6·N + 12·L·d·s + the output head where it predicts.

    N counts the dense weights of the layers (4d² attention + 2·d·i feed-forward per layer,
    embeddings excluded: a lookup is not a matmul); 12·L·d·s is the attention score and value
    products (2·s·d forward per layer for each, times 3 for forward + backward, PaLM appendix B);
    the head (d² transform + d·V decoder) costs 6 FLOPs per weight at the predicted positions
    only (``predicted_fraction`` = the mask rate for MLM: no loss is defined elsewhere).
    A factorised embedding (ALBERT, an ELECTRA generator: ``embedding_size`` E != d) adds its E·d
    projection at every position; the head's transform then maps d to ``head_width`` (E for their
    MLM heads, which decode from E; d by default) and its decoder maps that to V.
    """
    e = embedding_size or hidden
    w = head_width or hidden
    dense = layers * (4 * hidden * hidden + 2 * hidden * intermediate) + (e * hidden if e != hidden else 0)
    head = hidden * w + w * vocab_size
    return 6.0 * dense + 12.0 * layers * hidden * seq_len + 6.0 * head * predicted_fraction


def _of_config(config: Any, seq_len: int, vocab_size: int, predicted_fraction: float, mlm_head: bool = True) -> float:
    """``mlm_head``: the head decodes from the embedding width (an MLM head); else a d x d transform."""
    hidden = config.hidden_size
    inter = getattr(config, "intermediate_size", None) or getattr(config, "hidden_dim", None) or 4 * hidden
    emb = getattr(config, "embedding_size", None) or hidden
    return flops_per_token(config.num_hidden_layers, hidden, inter, seq_len, vocab_size, predicted_fraction,
                           embedding_size=emb, head_width=emb if mlm_head else hidden)


def module_flops_per_token(module: Any, seq_len: int, mask_prob: float) -> float:
    """:func:`flops_per_token` of a pretraining module (:func:`biotok_train.pretrain.models.build`),
    from its Hugging Face configs: BERT / ALBERT / RoBERTa MLM with the decoder at the masked
    positions (a factorised embedding's projection and head counted as they are); ELECTRA the
    generator (MLM at the masked positions) plus the discriminator (a d² + d head at every position)."""
    if hasattr(module, "discriminator"):
        gen, disc = module.generator.config, module.discriminator.config
        return (_of_config(gen, seq_len, gen.vocab_size, mask_prob)
                + _of_config(disc, seq_len, 1, 1.0, mlm_head=False))
    config = module.model.config
    return _of_config(config, seq_len, config.vocab_size, mask_prob)


def mfu(tokens_per_s: float, per_token: float, peak: float | None) -> float | None:
    """Model FLOPs utilization: achieved model FLOP/s over the peak (``peak`` in TFLOP/s); None
    without a peak (a CPU, an unknown GPU) or without tokens."""
    if not peak or not tokens_per_s:
        return None
    return tokens_per_s * per_token / (peak * 1e12)


__all__ = ["PEAK_BF16_TFLOPS", "flops_per_token", "mfu", "module_flops_per_token", "peak_tflops"]
