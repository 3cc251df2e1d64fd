"""biotok_train.pretrain.flops: the one FLOPs-per-token formula, MFU and GPU peak table."""

from __future__ import annotations

import pytest

from biotok_train.pretrain import flops as F


def test_flops_per_token_of_bert_base():
    L, d, i, s, V = 12, 768, 3072, 128, 32000
    dense = L * (4 * d * d + 2 * d * i)  # 84.9 M weights in the layers' matmuls
    expected = 6 * dense + 12 * L * d * s + 6 * (d * d + d * V) * 0.15
    assert F.flops_per_token(L, d, i, s, V, 0.15) == pytest.approx(expected)
    assert 5.4e8 < expected < 5.5e8
    # seq 512 costs more per token only through attention
    assert F.flops_per_token(L, d, i, 512, V, 0.15) - expected == pytest.approx(12 * L * d * (512 - 128))


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
    expected = (F.flops_per_token(gen.num_hidden_layers, gen.hidden_size, gen.intermediate_size, 64, 500, 0.15)
                + F.flops_per_token(disc.num_hidden_layers, disc.hidden_size, disc.intermediate_size, 64, 1, 1.0))
    assert F.module_flops_per_token(el, 64, 0.15) == pytest.approx(expected)
