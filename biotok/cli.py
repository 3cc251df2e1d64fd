"""The ``biotok`` command line: a thin layer over the Python API.

Every :class:`~biotok.errors.BiotokError` becomes one line on stderr and exit code 2.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from biotok import __version__
from biotok.errors import BiotokError


class BiotokGroup(click.Group):
    """A click group that turns BiotokError into one clean line and exit 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BiotokError as e:
            click.echo(f"biotok: error: {e}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("biotok: interrupted", err=True)
            ctx.exit(130)


@click.group(cls=BiotokGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="biotok")
def main() -> None:
    """biotok: choose, build and prove a biomedical vocabulary before you pretrain on it.

    \b
    Typical session:
      biotok train corpora/sample/e3c_pamj_fr.txt --lower --vocab-size 8000 --out tok/
      biotok compare tok/ camemberta --corpus held_out.txt
      biotok report tok/ camemberta bert --corpus held_out.txt --out report/
    """


def corpus_options(f):
    """--field shared by every command that reads a corpus."""
    return click.option(
        "--field",
        "field_name",
        default=None,
        metavar="NAME",
        help="JSON field holding the text in .jsonl inputs (default: text).",
    )(f)


# Commands live in their own modules and register themselves here.
from biotok import cli_compare, cli_train  # noqa: E402

cli_train.register(main)  # train, count
cli_compare.register(main)  # compare, report


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
