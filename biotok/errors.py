"""One error family for everything a user can get wrong; the CLI prints it as one line, exit 2.

Errors carry data where a caller may act on it (``VocabSizeError.supported``), so no caller
ever parses a message.
"""

from __future__ import annotations


class BiotokError(Exception):
    """Base class: a problem with the user's input, reported without a traceback."""


class CorpusError(BiotokError):
    """A corpus file is missing, empty, binary, compressed badly or not UTF-8."""


class ConfigError(BiotokError):
    """An option or combination of options cannot work (e.g. an impossible vocab size)."""


class VocabSizeError(ConfigError):
    """The corpus cannot give exactly ``asked`` pieces; ``supported`` is the size it can give.

    ``supported < asked``: the text holds too few distinct pieces (lower the size or add text);
    ``supported > asked``: its characters and the special tokens alone need ``supported``.
    """

    def __init__(self, asked: int, supported: int, algo: str = "", detail: str = "") -> None:
        super().__init__(asked, supported, algo, detail)
        self.asked = asked
        self.supported = supported
        self.algo = algo
        self.detail = detail

    @property
    def too_large(self) -> bool:
        """True when fewer pieces than asked are possible (the size must go down)."""
        return self.supported < self.asked

    def __str__(self) -> str:
        with_algo = f" with {self.algo}" if self.algo else ""
        if self.too_large:
            return (
                f"asked for {self.asked} pieces but this corpus supports only {self.supported}"
                f"{with_algo}{self.detail}; lower --vocab-size to at most {self.supported} "
                "or train on more text"
            )
        return (
            f"vocab size {self.asked} is too small: the corpus' characters and the special tokens "
            f"alone need {self.supported} pieces{with_algo}{self.detail}; "
            f"use --vocab-size {self.supported} or more"
        )


class TokenizerLoadError(BiotokError):
    """A tokenizer name, alias or file cannot be resolved or parsed."""


class OutputExistsError(BiotokError):
    """The output path exists and --force was not given, or it may not be replaced at all."""


class OutputWriteError(BiotokError):
    """An output cannot be written: read-only file system, full disk, permission denied..."""


class TrainingError(BiotokError):
    """A backend trainer failed on valid-looking input."""


class DataError(BiotokError):
    """A data directory or file (prepared data, a dataset) is missing, incomplete or inconsistent."""


class DamagedFileError(DataError):
    """A file a biotok run wrote (a cache, a recipe, a checkpoint) cannot be read back as written:
    ``path`` names it, so a caller may recompute it instead of refusing."""

    def __init__(self, message: str, path: object = None) -> None:
        super().__init__(message)
        self.path = path


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that every ``finally`` and temporary-file cleanup runs
    (the CLI exits 143); a KeyboardInterrupt, so whatever stops cleanly on Ctrl-C stops on it too."""


__all__ = [
    "BiotokError",
    "ConfigError",
    "CorpusError",
    "DamagedFileError",
    "DataError",
    "OutputExistsError",
    "OutputWriteError",
    "Terminated",
    "TokenizerLoadError",
    "TrainingError",
    "VocabSizeError",
]
