"""LAMB against a step computed by hand; parameter groups; warm-up + decay schedules."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from biotok_train.optim import Lamb, build_optimizer, lr_lambda, param_groups  # noqa: E402
from biotok_train.optim import build_schedule as build_scheduler  # noqa: E402


def test_lamb_first_step_by_hand():
    w0, g0 = [3.0, 4.0], [0.1, -0.2]
    b0, gb = [1.0], [0.5]
    lr, wd, eps = 0.1, 0.01, 1e-6
    w = torch.nn.Parameter(torch.tensor(w0, dtype=torch.float64))
    b = torch.nn.Parameter(torch.tensor(b0, dtype=torch.float64))
    opt = Lamb([{"params": [w], "weight_decay": wd, "adapt": True},
                {"params": [b], "weight_decay": 0.0, "adapt": False}], lr=lr, eps=eps)
    w.grad = torch.tensor(g0, dtype=torch.float64)
    b.grad = torch.tensor(gb, dtype=torch.float64)
    opt.step()

    # by hand: step 1, bias-corrected m̂ = g and v̂ = g², so r = g / (|g| + eps) + wd·w
    r = [g / (abs(g) + eps) + wd * x for g, x in zip(g0, w0)]
    trust = math.sqrt(sum(x * x for x in w0)) / math.sqrt(sum(x * x for x in r))
    expected = [x - lr * trust * ri for x, ri in zip(w0, r)]
    assert w.detach().tolist() == pytest.approx(expected, rel=1e-12)
    # excluded parameter: plain Adam-like step, no decay, no trust ratio
    assert b.item() == pytest.approx(b0[0] - lr * gb[0] / (gb[0] + eps), rel=1e-12)


def test_lamb_second_step_by_hand():
    b1, b2, lr, eps = 0.9, 0.999, 0.01, 1e-6
    p = torch.nn.Parameter(torch.tensor([2.0], dtype=torch.float64))
    opt = Lamb([p], lr=lr, betas=(b1, b2), eps=eps, weight_decay=0.0)
    grads = [0.3, -0.1]
    m = v = 0.0
    x = 2.0
    for t, g in enumerate(grads, 1):
        p.grad = torch.tensor([g], dtype=torch.float64)
        opt.step()
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        r = (m / (1 - b1**t)) / (math.sqrt(v / (1 - b2**t)) + eps)
        x = x - lr * (abs(x) / abs(r)) * r  # one-element tensor: trust ratio |w| / |r|
    assert p.item() == pytest.approx(x, rel=1e-12)


def test_lamb_zero_weights_use_ratio_one():
    p = torch.nn.Parameter(torch.zeros(3))
    opt = Lamb([p], lr=0.1, weight_decay=0.0)
    p.grad = torch.ones(3)
    opt.step()
    assert torch.allclose(p.detach(), torch.full((3,), -0.1), atol=1e-6)


def test_no_decay_for_bias_and_layernorm():
    from transformers import BertConfig, BertForMaskedLM

    model = BertForMaskedLM(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=32))
    decay, no_decay = param_groups(model, 0.01)
    names = {id(p): n for n, p in model.named_parameters()}
    assert all(not names[id(p)].endswith("bias") and "LayerNorm" not in names[id(p)] for p in decay["params"])
    assert any("LayerNorm" in names[id(p)] for p in no_decay["params"])
    assert no_decay["weight_decay"] == 0.0 and not no_decay["adapt"]
    assert isinstance(build_optimizer(model, "adamw", 1e-3), torch.optim.AdamW)
    assert isinstance(build_optimizer(model, "lamb", 1e-3), Lamb)


@pytest.mark.parametrize("schedule", ["linear", "cosine"])
def test_warmup_then_decay(schedule):
    vals = [lr_lambda(s, total=100, warmup=10, schedule=schedule) for s in range(100)]
    assert vals[0] == pytest.approx(0.1) and vals[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(vals[9:], vals[10:]))
    assert vals[-1] < 0.05
    if schedule == "cosine":
        assert vals[55] == pytest.approx(0.5, abs=0.01)


def test_scheduler_fraction_warmup():
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1.0)
    sched = build_scheduler(opt, total=100, warmup=0.1, schedule="linear")
    lrs = []
    for _ in range(12):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0) and lrs[11] < 1.0


def test_layer_decay_scales_each_layer_from_the_head_down():
    from transformers import BertConfig, BertForSequenceClassification

    from biotok_train.config import OptimConfig
    from biotok_train.optim import layer_depth

    model = BertForSequenceClassification(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3,
                                                     num_attention_heads=2, intermediate_size=32, num_labels=2))
    assert [layer_depth(n, 3) for n in ("bert.embeddings.word_embeddings.weight", "bert.encoder.layer.0.output.dense.weight",
                                        "bert.encoder.layer.2.attention.self.query.bias", "bert.pooler.dense.weight",
                                        "classifier.weight")] == [0, 1, 3, 4, 4]
    opt = build_optimizer(model, OptimConfig(lr=1.0, layer_decay=0.5))
    lr_of = {id(p): g["lr"] for g in opt.param_groups for p in g["params"]}
    named = dict(model.named_parameters())
    assert lr_of[id(named["classifier.weight"])] == 1.0
    assert lr_of[id(named["bert.encoder.layer.2.output.dense.weight"])] == 0.5
    assert lr_of[id(named["bert.encoder.layer.0.output.dense.weight"])] == 0.125
    assert lr_of[id(named["bert.embeddings.word_embeddings.weight"])] == 0.0625
    assert lr_of[id(named["bert.embeddings.LayerNorm.weight"])] == 0.0625  # no decay group, same depth
    assert sum(len(g["params"]) for g in opt.param_groups) == len(named)
    assert all(g["weight_decay"] == 0.0 for g in opt.param_groups if any(p is named["classifier.bias"] for p in g["params"]))
    plain = build_optimizer(model, OptimConfig(lr=1.0))
    assert len(plain.param_groups) == 2 and {g["lr"] for g in plain.param_groups} == {1.0}
