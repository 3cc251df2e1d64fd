"""The ``biotok-train`` command line: prepare, pretrain, fine-tune, evaluate, ablate.

A thin layer over the Python API (:mod:`biotok_train`); every BiotokError becomes one line
``biotok-train: error: ...`` on stderr and exit 2 (``--debug`` adds the traceback).
Pretraining commands live in :mod:`biotok_train.cli.pretrain`, fine-tuning on any task and
benchmark suites in :mod:`biotok_train.cli.finetune`, evaluation commands in
:mod:`biotok_train.cli.eval`, ``ablate`` in :mod:`biotok_train.cli.ablate`.
"""

from __future__ import annotations

import sys

import click

from biotok._version import __version__
from biotok.cli import BiotokGroup
from biotok.cli.push import push
from biotok_train.cli.ablate import COMMANDS as ABLATE_COMMANDS
from biotok_train.cli.eval import COMMANDS as EVAL_COMMANDS
from biotok_train.cli.finetune import COMMANDS as FINETUNE_COMMANDS
from biotok_train.cli.pretrain import COMMANDS as PRETRAIN_COMMANDS
from biotok_train.cli.probe import COMMANDS as PROBE_COMMANDS
from biotok_train.cli.transfer import COMMANDS as TRANSFER_COMMANDS


@click.group(cls=BiotokGroup, prog_name="biotok-train")
@click.version_option(__version__, prog_name="biotok-train")
def main() -> None:
    """biotok-train: turn a vocabulary into a pretrained model and measure what it does.

    \b
    One GPU:        biotok-train mlm DATA --size base
    Many GPUs:      torchrun --nproc_per_node 8 -m biotok_train mlm DATA --size base
    Many machines:  accelerate launch --num_machines 2 ... -m biotok_train mlm DATA
    """


for _command in (*PRETRAIN_COMMANDS, *TRANSFER_COMMANDS, *FINETUNE_COMMANDS, *EVAL_COMMANDS, *ABLATE_COMMANDS,
                 *PROBE_COMMANDS, push):
    main.add_command(_command)

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
