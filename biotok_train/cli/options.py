"""Options shared by several ``biotok-train`` commands; defaults come from the config dataclasses
(:mod:`biotok_train.config`), values are checked by the configs' ``__post_init__``. The options
of both command lines (``--field``, ``--force``, ``--quiet``, ``--progress``, ``--data-dir``)
and the ``GreedyOption`` class are declared once, in :mod:`biotok.cli.options`."""

from __future__ import annotations

import inspect

import click

from biotok_train.config import FinetuneConfig


report_to_option = click.option(
    "--report-to", type=click.Choice(["auto", "tensorboard", "none"]), default="auto", show_default=True,
    help="Scalars to TensorBoard in OUT/tensorboard/ (auto: when the tensorboard package is installed); "
         "the JSONL log is written either way.")


def stack(*decorators):
    """One decorator applying ``decorators`` in order (the first is the outermost)."""
    def apply(f):
        for d in reversed(decorators):
            f = d(f)
        return f

    return apply


def param_default(func, name: str):
    """The default of parameter ``name`` of ``func``: for commands over a function without a config."""
    return inspect.signature(func).parameters[name].default


_FT = FinetuneConfig()  # its optim holds the fine-tuning lr (the field's own default leaves it None)

_seed_option = click.option("--seed", type=int, default=_FT.seed, show_default=True)
_epochs_lr = (
    click.option("--epochs", type=int, default=_FT.epochs, show_default=True),
    click.option("--lr", type=float, default=_FT.optim.lr, show_default=True, help="Peak learning rate (AdamW)."),
)
_rest = (
    click.option("--batch-size", type=int, default=_FT.batch_size, show_default=True),
    click.option("--max-steps", type=int, default=_FT.max_steps, show_default=True, help="0: no cap."),
    click.option("--max-length", type=int, default=_FT.max_length, show_default=True,
                 help="Pieces per input (a longer NER sentence is cut into chunks)."),
    click.option("--patience", type=int, default=_FT.patience, show_default=True,
                 help="Epochs without a better dev score before stopping."),
    click.option("--threads", type=int, default=_FT.threads, show_default=True,
                 help="torch CPU threads for the run; 0: torch's default. On a shared CPU one thread per "
                 "process did 3-4x more work per CPU-second than two."),
    click.option("--bf16/--no-bf16", default=_FT.bf16, show_default=True,
                 help="bf16 autocast where supported: CUDA, or a CPU with bf16 matrix units (amx_bf16, avx512_bf16: "
                      "1.6-3.5x faster steps); elsewhere fp32."),
    report_to_option,
)
finetune_options = stack(*_epochs_lr, _seed_option, *_rest)
recipe_options = stack(*_epochs_lr, *_rest)
""":data:`finetune_options` without ``--seed`` (for commands that take several seeds)."""
