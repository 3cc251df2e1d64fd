"""biotok.cli: the shared group (one error line naming the program, --debug, logging to stderr)."""

from __future__ import annotations

import logging

import click
from click.testing import CliRunner

from biotok.cli import BiotokGroup, main
from biotok.errors import ConfigError


@click.group(cls=BiotokGroup, prog_name="biotok-other")
def other() -> None:
    """A second program built on the same group."""


@other.command()
def fail() -> None:
    """Fails with a chained BiotokError."""
    try:
        int("x")
    except ValueError as e:
        raise ConfigError("bad value") from e


@other.command()
def say() -> None:
    """Logs one line through a library logger."""
    logging.getLogger("biotok.something").info("hello from the library")


def test_error_line_names_the_program_and_exits_2():
    r = CliRunner().invoke(other, ["fail"])
    assert r.exit_code == 2
    assert r.output.strip() == "biotok-other: error: bad value"


def test_debug_shows_the_traceback_with_its_cause():
    r = CliRunner().invoke(other, ["--debug", "fail"])
    assert r.exit_code == 2 and "Traceback" in r.output and "ValueError" in r.output
    assert r.output.strip().splitlines()[-1] == "biotok-other: error: bad value"


def test_library_logging_goes_to_stderr_during_a_command():
    r = CliRunner().invoke(other, ["say"])
    assert r.exit_code == 0 and "hello from the library" in r.stderr and r.stdout == ""
    assert not logging.getLogger("biotok").handlers  # removed after the run


def test_biotok_group_has_its_commands_and_name(tmp_path):
    assert {"train", "count", "compare", "report"} <= set(main.commands)
    r = CliRunner().invoke(main, ["train", str(tmp_path / "nope.txt")])
    assert r.exit_code == 2 and r.output.startswith("biotok: error: ")
    assert CliRunner().invoke(main, ["--version"]).output.startswith("biotok, version")


def test_quiet_keeps_the_library_progress_lines_off_stderr():
    """--quiet silences INFO records of biotok/biotok_train loggers (ablate's '[tok] prepare'), not warnings."""
    import logging

    import click
    from click.testing import CliRunner

    from biotok.cli import BiotokGroup
    from biotok.cli.options import quiet_option

    @click.group(cls=BiotokGroup, prog_name="prog")
    def grp() -> None:
        """A group."""

    @grp.command()
    @quiet_option
    def go(quiet: bool) -> None:
        logging.getLogger("biotok_train.ablate").info("[tok] prepare")
        logging.getLogger("biotok").warning("careful")

    loud = CliRunner().invoke(grp, ["go"])
    assert "[tok] prepare" in loud.stderr and "careful" in loud.stderr
    quiet = CliRunner().invoke(grp, ["go", "-q"])
    assert quiet.exit_code == 0 and "[tok] prepare" not in quiet.stderr and "careful" in quiet.stderr
    again = CliRunner().invoke(grp, ["go"])  # the next command logs as before
    assert "[tok] prepare" in again.stderr
