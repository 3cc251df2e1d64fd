"""Options shared by several commands; their defaults are read from the config dataclasses.

A default lives in one place, the dataclass field (:mod:`biotok.config`); the options here only
name and document it, so the CLI, the Python API and the docs cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from pathlib import Path
from typing import Any, Callable

import click

from biotok.config import BATCH_SIZE, NormalizeConfig, TrainConfig
from biotok.errors import ConfigError

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def default_of(cls: type, name: str) -> Any:
    """The default of dataclass field ``name`` of ``cls`` (its default_factory called if needed)."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            if f.default is not dataclasses.MISSING:
                return f.default
            if f.default_factory is not dataclasses.MISSING:
                return f.default_factory()
    raise KeyError(f"{cls.__name__} has no field {name!r} with a default")


class GreedyOption(click.Option):
    """A ``multiple`` option that also takes the values after it, up to the next option:
    ``--tokenizers A B C --seeds 0 1`` (as well as ``--tokenizers A --tokenizers B``)."""

    def add_to_parser(self, parser, ctx) -> None:
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            opt = parser._long_opt.get(name) or parser._short_opt.get(name)
            if opt is None:
                continue
            previous = opt.process

            def process(value, state, previous=previous) -> None:
                previous(value, state)
                while state.rargs and not state.rargs[0].startswith("-"):
                    previous(state.rargs.pop(0), state)
                # a negative number ('--seeds -1') would be read as an option: not supported

            opt.process = process


def _stack(*decorators: Decorator) -> Decorator:
    def apply(f):
        for d in reversed(decorators):
            f = d(f)
        return f

    return apply


def _when_terminal(ctx: click.Context, param: click.Parameter, value: bool | None) -> bool:
    """--progress/--no-progress left out: a bar when stderr is a terminal."""
    return sys.stderr.isatty() if value is None else value


def existing_folder(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """Option callback: a folder option naming no folder is an error at the door (one line, exit 2)."""
    if value is not None and not Path(value).is_dir():
        what = "is not a folder" if Path(value).exists() else "does not exist"
        raise ConfigError(f"--{param.name.replace('_', '-')} {value} {what}")
    return value


# The options of both command lines (biotok and biotok-train), each declared here only.
field_option = click.option(
    "--field", "field_name", default=default_of(TrainConfig, "field_name"), metavar="NAME",
    help="JSON field holding the text in .jsonl inputs (default: text).",
)

force_option = click.option("--force", is_flag=True, help="Replace --out if it exists (a biotok output).")

def _quiet_logs(ctx: click.Context, param: click.Parameter, quiet: bool) -> bool:
    """With --quiet the library's progress lines (INFO log records) stay off stderr too; warnings
    and errors still show. The command's own level is set again by the next command."""
    if quiet:
        for name in ("biotok", "biotok_train"):
            logging.getLogger(name).setLevel(logging.WARNING)
    return quiet


quiet_option = click.option("--quiet", "-q", is_flag=True, callback=_quiet_logs,
                            help="No progress output (bars and lines) on stderr.")

progress_option = click.option(
    "--progress/--no-progress", default=None, callback=_when_terminal,
    help="Progress bar on stderr (default: when stderr is a terminal).",
)

# long work (training, a report): progress by default, whatever stderr is (biotok.progress)
progress_lines_option = click.option(
    "--progress/--no-progress", default=True, show_default=True,
    help="Progress on stderr: a bar on a terminal, else a line every 30 s (nohup, SLURM, a pipe; "
         "$BIOTOK_PROGRESS_SECONDS sets the interval).",
)

data_dir_option = click.option(
    "--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None, callback=existing_folder,
    help="Folder of the shared corpora: named datasets and terminologies [default: $BIOTOK_SHARED_DATA/corpora].",
)

max_lines_option = click.option("--max-lines", type=click.IntRange(min=1), default=None,
                                help="Read at most N corpus lines.")

batch_size_option = click.option("--batch-size", type=click.IntRange(min=1), default=BATCH_SIZE, show_default=True,
                                 help="Lines per encode_batch call.")


tokenizer_options = _stack(
    click.option(
        "--tokenizers-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
        callback=existing_folder,
        help="Local folder of tokenizers: alias X is looked up in DIR/<X's folder> before the Hub "
        "(e.g. camemberta -> DIR/camemberta-base) [default: $BIOTOK_SHARED_DATA/tokenizers].",
    ),
    click.option(
        "--lower/--cased", "lowercase", default=None,
        help="Force lowercasing for vocab.txt / vocab.json tokenizers (default: decided by the vocab).",
    ),
)

_N = NormalizeConfig()
normalize_options = _stack(
    click.option("--lower/--cased", default=_N.lowercase, show_default=True,
                 help="Lowercase (accents are kept: Hôpital -> hôpital)."),
    click.option("--normalize/--no-normalize", default=True, show_default=True,
                 help="biotok normalization (Unicode, typography, punctuation spacing); --no-normalize = raw text."),
    click.option("--unicode", type=click.Choice(["NFKC", "NFC"]), default=_N.unicode, show_default=True,
                 help="Unicode normalization form (see docs/normalization.md)."),
    click.option("--strip-accents", is_flag=True, default=_N.strip_accents, help="Also remove accents (off by default)."),
)
