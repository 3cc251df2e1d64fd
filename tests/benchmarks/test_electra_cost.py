"""benchmarks.speed.electra_cost: the counts behind the ELECTRA-small 1 % MFU explanation, at tiny size."""

import pytest

pytest.importorskip("torch")

from benchmarks.speed import electra_cost as E  # noqa: E402
from biotok_train.pretrain.flops import module_flops_per_token  # noqa: E402


def test_counts_at_tiny_size():
    r = E.measure("tiny", seq=32, vocab=500, batch=2)
    bert, electra = r["models"]["bert"], r["models"]["electra"]
    assert bert["layers"] == 2 and electra["layers"] == 4  # tiny: 2 layers; ELECTRA runs them twice (gen + disc)
    for m, encoders in ((bert, 1), (electra, 2)):
        assert m["dynamo"] == {"graphs": 1, "graph_breaks": 0, "break_reasons": []}  # one compiled graph per forward
        assert sum(m["step"]["host_syncs"].values()) <= encoders  # no host read of ours in the step
    assert electra["step"]["ops"] > 1.5 * bert["step"]["ops"]
    assert r["electra_over_bert"]["layers"] == 2.0


def test_the_mfu_formula_counts_generator_and_discriminator():
    module = E._module("electra", "tiny", 32, 500)
    both = module_flops_per_token(module, 32, 0.15)
    disc = E.layers(module)["discriminator"]
    assert both > 6 * disc[0] * (4 * disc[1] ** 2 + 2 * disc[1] * module.discriminator.config.intermediate_size)
