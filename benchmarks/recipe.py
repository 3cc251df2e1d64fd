"""What the recipes under benchmarks/experiments/ that are not an ablation share (an ablation's
recipe: :mod:`biotok_train.ablate.experiment`): one command line whose options are data and whose
bad input is one error line and exit code 2, a page written from its JSON and rewritten from that
JSON alone, the command a page names, runs timed side by side, and Markdown tables. What they cache
by content: :mod:`benchmarks.keyed`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence, TypeVar

from biotok.errors import BiotokError, ConfigError
from biotok.output import atomic_file

T = TypeVar("T")


def command(name: str) -> str:
    """The command that runs the recipe ``name``."""
    return f"python -m benchmarks.experiments.{name}"


def command_for(name: str, values: dict[str, object], defaults: dict[str, object]) -> str:
    """The command that gives ``values`` ({flag: value}, in the order the page names them), each flag left
    out at its ``defaults`` value: a switch by its name when true, a sequence as its items."""
    parts = [command(name)]
    for flag, value in values.items():
        if isinstance(value, bool):
            parts += [flag] if value else []
        elif value != defaults[flag]:
            parts += [flag, *map(str, value if isinstance(value, (list, tuple)) else [value])]
    return " ".join(parts)


@dataclass(frozen=True)
class Flag:
    """One of a recipe's own options, as data: its default (a bool: a switch; None: give ``type``),
    what it is (``help``, also the words of its error), and for a number the least and most values
    it takes, checked before any work and named as the user typed it."""

    default: object
    help: str
    type: Callable | None = None
    low: float | None = None
    high: float | None = None
    choices: Sequence | None = None


Options = Callable[[argparse.ArgumentParser], object] | dict[str, Flag]


def add_options(ap: argparse.ArgumentParser, options: Options) -> None:
    """A recipe's options on ``ap``: a function that adds them, or {"--name": Flag}."""
    if callable(options):
        options(ap)
        return
    for name, f in options.items():
        if isinstance(f.default, bool):
            ap.add_argument(name, action="store_true", help=f.help)
        else:
            ap.add_argument(name, type=f.type or type(f.default), default=f.default, choices=f.choices, help=f.help)


def check_options(args: argparse.Namespace, options: Options) -> None:
    """A :class:`ConfigError` for the first Flag whose value is out of its bounds."""
    for name, f in ({} if callable(options) else options).items():
        value = getattr(args, _dest(name))
        if value is None or (f.low is None or value >= f.low) and (f.high is None or value <= f.high):
            continue
        if f.low is not None and f.high is not None:
            raise ConfigError(f"{name} {value}: {f.help} must be between {f.low:g} and {f.high:g}")
        raise ConfigError(f"{name} {value}: {f.help} must be " + (f"at least {f.low:g}" if f.high is None
                                                                   else f"at most {f.high:g}"))


def _dest(flag: str) -> str:
    """The attribute argparse gives ``flag`` ("--vocab-size": vocab_size)."""
    return flag.lstrip("-").replace("-", "_")


def command_line(name: str, doc: str, options: Options, run: Callable[[argparse.Namespace], object],
                 argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` with the recipe's ``options(parser)`` (``--help``: ``doc``), then ``run(args)``,
    ``args.command`` the command line as typed: a bad input (a :class:`BiotokError`) or a full or
    read-only disk is one line and exit code 2."""
    ap = argparse.ArgumentParser(prog=command(name), description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(ap, options)
    args = ap.parse_args(argv)
    args.command = " ".join([command(name), *(sys.argv[1:] if argv is None else argv)])  # as typed: what made the page
    try:
        check_options(args, options)
        run(args)
    except (BiotokError, OSError) as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 2
    return 0


@dataclass(frozen=True)
class Page:
    """A recipe whose page (``md``) is rendered from its JSON (``data``) alone, both under a folder
    (``root(args)`` unless --out): ``compute(args, folder)`` measures and returns the JSON (its figures
    written under the folder); ``render(data)`` is the page, and ``--from-json`` renders it again
    from a JSON already made, running nothing."""

    name: str
    doc: str
    root: Callable[[argparse.Namespace], Path]
    data: str
    md: str
    compute: Callable[[argparse.Namespace, Path], dict]
    render: Callable[[dict], str]
    options: dict[str, Flag] = field(default_factory=dict)
    out: str = "--out"  # the flag naming the folder


def page_main(page: Page, argv: Sequence[str] | None = None) -> int:
    """``page``'s command line: measure and write the JSON and the page, or (--from-json) only the page."""
    options = {"--from-json": Flag(None, f"only rewrite {page.md} from its {page.data}", Path),
               page.out: Flag(None, f"the folder of {page.md} and {page.data}", Path), **page.options}

    def run(a: argparse.Namespace) -> None:
        root = Path(getattr(a, _dest(page.out)) or page.root(a))
        if a.from_json is not None:
            files = {page.md: page.render(read_json(a.from_json, f"run {command(page.name)} first, or name its JSON"))}
        else:
            data = page.compute(a, root)
            files = {page.data: data, page.md: page.render(data)}
        print(f"{page.name}: {write_page(root, files)}", file=sys.stderr)

    return command_line(page.name, page.doc, options, run, argv)


def refuse(checks: Iterable[tuple[bool, str]]) -> None:
    """A :class:`ConfigError` with the message of the first check that is false (a recipe's own flags,
    checked before any work and named as the user typed them)."""
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)


def int_list(value: str, flag: str, example: str) -> tuple[int, ...]:
    """The integers of ``value``, separated by commas (blanks skipped), or one ConfigError naming ``flag``."""
    try:
        return tuple(int(s) for s in value.split(",") if s.strip())
    except ValueError:
        raise ConfigError(f"{flag} {value!r}: give {example}") from None


def known_tasks(names: Sequence[str]) -> list[str]:
    """``names``, every one a registered task: else one error naming the first that is not (before any work)."""
    from biotok_train.tasks import get_task  # lazy: the companion's registry, only for recipes that fine-tune

    for name in names:
        get_task(name)
    return list(names)


def timed_each(makers: dict[str, Callable[[], T]]) -> dict[str, tuple[T, float]]:
    """Each maker called in turn, one after the other in one process: its result and its seconds."""
    out = {}
    for name, make in makers.items():
        start = time.perf_counter()
        out[name] = (make(), time.perf_counter() - start)
    return out


def table(header: Sequence[str], align: str, rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table: ``align`` one letter a column (``l`` left, ``r`` right)."""
    return ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|",
            *("| " + " | ".join(map(str, row)) + " |" for row in rows)]


def dumps(data: object) -> str:
    """A page's JSON as the recipes write it: indented, UTF-8 as is, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_page(root: Path, files: dict[str, str | dict]) -> Path:
    """Each file under ``root`` (a dict: as :func:`dumps` writes it), each through a temporary file;
    the last file's path (the page)."""
    for name, text in files.items():
        with atomic_file(root / name, force=True) as tmp:
            tmp.write_text(text if isinstance(text, str) else dumps(text), encoding="utf-8")
    return root / name


def read_json(path: Path, how: str) -> dict:
    """A page's JSON, or one clear error saying ``how`` to make it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BiotokError(f"{path} not found: {how}") from None
    except (OSError, ValueError) as e:
        raise BiotokError(f"{path}: not a page's JSON ({e}): {how}") from None


__all__ = ["Flag", "Options", "Page", "add_options", "check_options", "command", "command_for", "command_line",
           "dumps", "int_list", "known_tasks", "page_main", "read_json", "refuse", "table", "timed_each", "write_page"]
