"""The ``biotok-train`` command line: prepare, pretrain, fine-tune, evaluate, ablate.

A thin layer over the Python API (:mod:`biotok_train`); every BiotokError becomes one line
``biotok-train: error: ...`` on stderr and exit 2 (``--debug`` adds the traceback).
Pretraining commands live in :mod:`biotok_train.cli.pretrain`, fine-tuning on any task and
benchmark suites in :mod:`biotok_train.cli.finetune`, evaluation commands in
:mod:`biotok_train.cli.eval`, ``ablate`` in :mod:`biotok_train.cli.ablate`.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from biotok._version import __version__
from biotok.cli import BiotokGroup

# The modules defining the commands (each a COMMANDS tuple), in the order of --help; each is
# imported when one of its commands runs, so `biotok-train fill-mask` does not import the
# ablation engine or the probe. WHERE says which module holds a command (a command missing from
# it is still found: every module is then imported).
MODULES = ("pretrain", "transfer", "finetune", "eval", "ablate", "probe", "push")
WHERE = {"prepare": "pretrain", "mlm": "pretrain", "electra": "pretrain", "plot": "pretrain", "transfer": "transfer",
         "finetune": "finetune", "bench": "finetune", "ner": "eval", "classify": "eval", "eval-mlm": "eval",
         "fill-mask": "eval", "ablate": "ablate", "probe": "probe", "push": "push"}


class _LazyGroup(BiotokGroup):
    """A BiotokGroup importing the module of a command when that command is asked for (its
    commands still go through BiotokGroup.add_command and its checks)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._loaded: set[str] = set()
        self._loading = False
        super().__init__(*args, **kwargs)

    @property
    def commands(self) -> dict[str, click.Command]:  # every command: all modules imported
        if not self._loading:
            for module in MODULES:
                self._load(module)
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._commands = value

    def _load(self, module: str) -> None:
        if module in self._loaded:
            return
        self._loaded.add(module)
        self._loading = True
        try:
            for cmd in importlib.import_module(f"biotok_train.cli.{module}").COMMANDS:
                self.add_command(cmd)
        finally:
            self._loading = False

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in WHERE:
            self._load(WHERE[cmd_name])
        return self._commands.get(cmd_name) or self.commands.get(cmd_name)


@click.group(cls=_LazyGroup, prog_name="biotok-train")
@click.version_option(__version__, prog_name="biotok-train")
def main() -> None:
    """biotok-train: turn a vocabulary into a pretrained model and measure what it does.

    \b
    One GPU:        biotok-train mlm DATA --size base
    Many GPUs:      torchrun --nproc_per_node 8 -m biotok_train mlm DATA --size base
    Many machines:  accelerate launch --num_machines 2 ... -m biotok_train mlm DATA
    """


__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
