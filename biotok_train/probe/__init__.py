"""A causal-LM probe of vocabularies: one small GPT-2 per tokenizer (transformers' own classes),
the same shape, training tokens and seeds, scored in bits per character of held-out text against
each tokenizer's unigram floor, with paired bootstraps over held-out documents.

``run_probe(ProbeConfig(...), out)`` (:mod:`biotok_train.probe.run`) writes probe.md,
probe.json, probe.png and timings.json; the command is ``biotok-train probe``. The text side
(:mod:`~biotok_train.probe.data`) needs no torch.
"""

from __future__ import annotations

from biotok_train.config import ProbeConfig


def run_probe(*args, **kwargs):
    """See :func:`biotok_train.probe.run.run_probe`."""
    from biotok_train.probe.run import run_probe as run

    return run(*args, **kwargs)


__all__ = ["ProbeConfig", "run_probe"]
