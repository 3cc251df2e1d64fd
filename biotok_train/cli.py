"""The ``biotok-train`` command line: prepare, pretrain, fine-tune, evaluate, ablate.

A thin layer over the Python API; every BiotokError becomes one line on stderr and exit 2.
Pretraining commands live in :mod:`biotok_train.cli_pretrain`, evaluation and ablation
commands in :mod:`biotok_train.cli_eval`; both register themselves on :data:`main`.
"""

from __future__ import annotations

import sys

import click

from biotok import __version__
from biotok.cli import BiotokGroup


@click.group(cls=BiotokGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="biotok-train")
def main() -> None:
    """biotok-train: turn a vocabulary into a pretrained model and measure what it does.

    \b
    One GPU:        biotok-train mlm DATA --size base
    Many GPUs:      torchrun --nproc_per_node 8 -m biotok_train mlm DATA --size base
    Many machines:  accelerate launch --num_machines 2 ... -m biotok_train mlm DATA
    """


# Commands live in their own modules and register themselves here.
from biotok_train import cli_eval, cli_pretrain  # noqa: E402

cli_pretrain.register(main)  # prepare, mlm, electra, plot
cli_eval.register(main)  # ner, classify, eval-mlm, fill-mask, ablate

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
