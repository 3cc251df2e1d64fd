"""The ``biotok`` command line: a thin layer over the Python API.

Every :class:`~biotok.errors.BiotokError` becomes one line on stderr, ``PROG: error: ...``, and
exit code 2; ``--debug`` shows the traceback as well. :class:`BiotokGroup` is shared with
``biotok-train``, which passes its own program name.
"""

from __future__ import annotations

import logging
import math
import signal
import sys
import threading
import traceback
from typing import Any

import click

from biotok._version import __version__
from biotok.card import set_command
from biotok.cli.compare import compare, report
from biotok.cli.decide import decide
from biotok.cli.extend import extend
from biotok.cli.push import push
from biotok.cli.sweep import cost, sweep
from biotok.cli.train import count, train
from biotok.config import INT64_MAX
from biotok.errors import BiotokError, Terminated
from biotok.pipes import safe_std_streams
from biotok.progress import BarSafeHandler
from biotok.output import as_os_error, os_error_message

_DEBUG_KEY = "biotok.debug"
_LOGGERS = ("biotok", "biotok_train")


def _set_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[_DEBUG_KEY] = True


class BiotokGroup(click.Group):
    """A click group: BiotokError -> ``PROG: error: msg`` and exit 2; ``--debug`` adds the traceback.

    ``prog_name`` (default: the group's name) names the program in the error line, so
    ``@click.group(cls=BiotokGroup, prog_name="biotok-train")`` prints ``biotok-train: error:``.
    Library logging (``biotok.*``, ``biotok_train.*``) goes to stderr while a command runs.
    """

    def __init__(self, *args: Any, prog_name: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", {}).setdefault("help_option_names", ["-h", "--help"])
        super().__init__(*args, **kwargs)
        self.prog_name = prog_name or self.name or "biotok"
        self.params.append(click.Option(
            ["--debug"], is_flag=True, expose_value=False, is_eager=True, callback=_set_debug,
            help="Show the full traceback of an error, and debug log messages.",
        ))

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        """Click's main, with its usage errors (bad value, missing argument, unknown command) as
        one ``PROG: error: ...`` line and exit 2, like every other error."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        set_command(self.prog_name, args)  # quoted by the model cards of what this run writes
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as e:  # a bare group or command: its help
            e.show()
            sys.exit(e.exit_code)
        except click.ClickException as e:
            ctx = getattr(e, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            message = " ".join(e.format_message().split())
            click.echo(f"{self.prog_name}: error: {message}{hint}", err=True)
            sys.exit(2)
        except click.Abort:
            click.echo(f"{self.prog_name}: interrupted", err=True)
            sys.exit(130)
        # non-standalone click returns the command's value, or the code of an explicit ctx.exit()
        sys.exit(code if isinstance(code, int) else 0)

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """Every command's numbers are checked at the door (:func:`_finite_numbers`), and ``-h`` is
        help as well as ``--help`` also when its context is made on its own (``cmd.make_context``:
        click caches the help option it made first)."""
        cmd.context_settings.setdefault("help_option_names", ["-h", "--help"])
        super().add_command(cmd, name)
        if not getattr(cmd.parse_args, "_checks_numbers", False):
            cmd.parse_args = _finite_numbers(cmd, cmd.parse_args)

    def invoke(self, ctx: click.Context) -> Any:
        with safe_std_streams():  # a closed pipe (| head, a gone SSH session) never stops a run
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        debug = bool(ctx.meta.get(_DEBUG_KEY))
        handler = _log_to_stderr(debug)
        previous = _catch_sigterm()
        try:
            return super().invoke(ctx)
        except BiotokError as e:
            self._fail(ctx, str(e), debug)
        except Terminated:
            click.echo(f"{self.prog_name}: terminated (SIGTERM)", err=True)
            ctx.exit(143)
        except KeyboardInterrupt:
            click.echo(f"{self.prog_name}: interrupted", err=True)
            ctx.exit(130)
        except Exception as e:  # OSError, or one a Rust library wrapped: read-only, disk full...
            oe = as_os_error(e)
            if oe is None:
                raise
            self._fail(ctx, os_error_message(oe, action="read or write"), debug)
        finally:
            _restore_sigterm(previous)
            for name in _LOGGERS:
                logging.getLogger(name).removeHandler(handler)

    def _fail(self, ctx: click.Context, message: str, debug: bool) -> None:
        if debug:
            click.echo(traceback.format_exc().rstrip(), err=True)
        click.echo(f"{self.prog_name}: error: {message}", err=True)
        ctx.exit(2)


def _finite_numbers(cmd: click.Command, parse_args):
    """``cmd.parse_args`` that refuses, as a usage error naming the option, a float option that is
    not finite (``--lr inf``, ``--epochs nan``) or an integer beyond 64 bits: no library downstream
    takes them. Ranges of their own are checked by the configs (:func:`biotok.config.check_range`)."""
    def parse(ctx: click.Context, args: list[str]) -> list[str]:
        rest = parse_args(ctx, args)
        for param in cmd.params:
            value = ctx.params.get(param.name)
            for x in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(x, float) and not math.isfinite(x):
                    raise click.BadParameter(f"{x} is not a finite number", ctx=ctx, param=param)
                if isinstance(x, int) and not isinstance(x, bool) and abs(x) > INT64_MAX:
                    raise click.BadParameter(f"{x} is beyond 64 bits", ctx=ctx, param=param)
        return rest

    parse._checks_numbers = True  # type: ignore[attr-defined]
    return parse


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def _catch_sigterm():
    """Turn SIGTERM into :class:`Terminated` while a command runs (main thread only); returns the
    previous handler, or None when it could not be installed."""
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        return signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):
        return None


def _restore_sigterm(previous) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def _log_to_stderr(debug: bool) -> logging.Handler:
    """A stderr handler for the library loggers (INFO, or DEBUG with --debug), removed after the run."""
    handler = BarSafeHandler(sys.stderr)  # above a progress bar, not onto its line
    handler.setFormatter(logging.Formatter("%(message)s"))
    level = logging.DEBUG if debug else logging.INFO
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(level)
    return handler


@click.group(cls=BiotokGroup, prog_name="biotok")
@click.version_option(__version__, prog_name="biotok")
def main() -> None:
    """biotok: choose, build and prove a biomedical vocabulary before you pretrain on it.

    \b
    Typical session:
      biotok train corpora/sample/e3c_pamj_fr.txt --lower --vocab-size 8000 --out tok/
      biotok extend camembertv2 corpora/sample/e3c_pamj_fr.txt --add 2000 --out camembertv2-bio/
      biotok compare tok/ camemberta --corpus held_out.txt
      biotok report tok/ camemberta bert --corpus held_out.txt --out report/
      biotok sweep corpus.txt --sizes 8000,16000,32000 --out sweep/
      biotok cost tok/ camemberta --corpus sample.txt --corpus-size 7GB --tokens-per-second 90000
      biotok decide compare.json probe/ ablation/ --out decision.html
      biotok push tok/ me/my-tokenizer
    """


for _command in (train, count, extend, compare, report, sweep, cost, decide, push):
    main.add_command(_command)

__all__ = ["BiotokGroup", "Terminated", "main"]
