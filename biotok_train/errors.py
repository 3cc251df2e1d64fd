"""Errors of the pretraining commands: all are BiotokError, so the CLI prints one line, exit 2."""

from __future__ import annotations

from biotok.errors import BiotokError, ConfigError


class DataError(BiotokError):
    """A prepared data directory is missing, incomplete or made for another tokenizer/length."""


class TokenizerMismatchError(DataError):
    """Data, tokenizer or checkpoint were made with different vocabularies (fingerprints differ)."""


class OutOfMemoryAtStartError(BiotokError):
    """The first training step did not fit in accelerator memory; says which setting to lower."""


__all__ = ["BiotokError", "ConfigError", "DataError", "TokenizerMismatchError", "OutOfMemoryAtStartError"]
