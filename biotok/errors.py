"""One error family for everything a user can get wrong; the CLI prints it as one line, exit 2."""

from __future__ import annotations


class BiotokError(Exception):
    """Base class: a problem with the user's input, reported without a traceback."""


class CorpusError(BiotokError):
    """A corpus file is missing, empty, binary, compressed badly or not UTF-8."""


class ConfigError(BiotokError):
    """An option or combination of options cannot work (e.g. an impossible vocab size)."""


class TokenizerLoadError(BiotokError):
    """A tokenizer name, alias or file cannot be resolved or parsed."""


class OutputExistsError(BiotokError):
    """The output path exists and --force was not given."""


class TrainingError(BiotokError):
    """A backend trainer failed on valid-looking input."""
