"""biotok_train.pretrain.flops: the one FLOPs-per-token formula, MFU and GPU peak table."""

from __future__ import annotations

import pytest

from biotok_train.pretrain import flops as F


def _measured(module, objective: str, batch: int = 4, seq_len: int = 64, masked: int = 38):
    """(FLOPs torch counts for one training step of ``module``, tokens, masked positions): a
    forward and backward under ``torch.utils.flop_counter.FlopCounterMode`` (matmuls, as the formula)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 500, (batch, seq_len), generator=g)
    labels = torch.full((batch, seq_len), -100)
    pos = torch.randperm(batch * seq_len, generator=g)[:masked]
    labels.view(-1)[pos] = ids.view(-1)[pos]
    kw = dict(input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids), labels=labels)
    if objective == "electra":
        kw["original_ids"] = ids
    with FlopCounterMode(display=False) as counter:
        module(**kw)["loss"].backward()
    return counter.get_total_flops(), batch * seq_len, masked


def test_flops_per_token_is_what_torch_counts_for_a_bert_mlm_step():
    """The formula against torch's own count of a real training step (not against itself)."""
    torch = pytest.importorskip("torch")
    from biotok_train.pretrain.models import Vocab, build

    torch.manual_seed(0)
    module = build("mlm", "bert", "tiny", Vocab(500, 0, 1, 2, 3), 64)
    flops, tokens, masked = _measured(module, "mlm")
    assert F.module_flops_per_token(module, 64, masked / tokens) * tokens == pytest.approx(flops, rel=1e-6)
    # seq 512 costs more per token only through attention
    L, d, i, V = 12, 768, 3072, 32000
    assert F.flops_per_token(L, d, i, 512, V, 0.15) - F.flops_per_token(L, d, i, 128, V, 0.15) == pytest.approx(
        12 * L * d * (512 - 128))


def test_flops_per_token_is_what_torch_counts_for_an_electra_step():
    torch = pytest.importorskip("torch")
    from biotok_train.pretrain.models import Vocab, build

    torch.manual_seed(0)
    module = build("electra", "bert", "tiny", Vocab(500, 0, 1, 2, 3), 64)
    flops, tokens, masked = _measured(module, "electra")
    assert F.module_flops_per_token(module, 64, masked / tokens) * tokens == pytest.approx(flops, rel=1e-6)


def test_mfu_and_peaks():
    assert F.mfu(725_000, 5.464e8, 989.0) == pytest.approx(725_000 * 5.464e8 / 989e12)
    assert F.mfu(1000.0, 1e9, None) is None and F.mfu(0.0, 1e9, 989.0) is None
    # dense (no sparsity) bf16 datasheet peaks; the more specific name wins
    assert F.peak_tflops("NVIDIA H100 80GB HBM3") == 989.0 and F.peak_tflops("NVIDIA H100 PCIe") == 756.0
    assert F.peak_tflops("NVIDIA H100 NVL") == 835.0 and F.peak_tflops("NVIDIA H200") == 989.0
    assert F.peak_tflops("NVIDIA A100-SXM4-40GB") == 312.0
    assert F.peak_tflops("NVIDIA L40S") == 362.0 and F.peak_tflops("NVIDIA L4") == 121.0
    assert F.peak_tflops("NVIDIA A10G") == F.peak_tflops("NVIDIA A10") == 125.0
    assert F.peak_tflops("Some Future GPU") is None


def test_module_flops_per_token_follows_the_model():
    """A BERT MLM module: the formula at the mask rate; ELECTRA adds its discriminator over every position."""
    from biotok_train.config import SIZES
    from biotok_train.pretrain.models import Vocab, build, electra_configs

    vocab = Vocab(500, 0, 1, 2, 3)
    layers, hidden, _, inter, _ = SIZES["bert"]["tiny"]
    mlm = build("mlm", "bert", "tiny", vocab, 64)
    assert F.module_flops_per_token(mlm, 64, 0.15) == pytest.approx(
        F.flops_per_token(layers, hidden, inter, 64, 500, 0.15))
    el = build("electra", "bert", "tiny", vocab, 64)
    disc, gen = electra_configs("tiny", vocab, 64)
    # the generator's factorised embedding: its projection, and a head that decodes from the embedding width
    expected = (F.flops_per_token(gen.num_hidden_layers, gen.hidden_size, gen.intermediate_size, 64, 500, 0.15,
                                  gen.embedding_size, gen.embedding_size)
                + F.flops_per_token(disc.num_hidden_layers, disc.hidden_size, disc.intermediate_size, 64, 1, 1.0,
                                    disc.embedding_size))
    assert gen.embedding_size != gen.hidden_size and expected > (
        F.flops_per_token(gen.num_hidden_layers, gen.hidden_size, gen.intermediate_size, 64, 500, 0.15)
        + F.flops_per_token(disc.num_hidden_layers, disc.hidden_size, disc.intermediate_size, 64, 1, 1.0))
    assert F.module_flops_per_token(el, 64, 0.15) == pytest.approx(expected)
