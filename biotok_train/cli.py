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


def _register() -> None:
    import importlib

    for mod in ("biotok_train.cli_pretrain", "biotok_train.cli_eval"):
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as e:  # a part not written yet
            if e.name != mod:
                raise
            continue
        module.register(main)


_register()

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
