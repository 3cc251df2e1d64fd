"""Errors of biotok_train: all are BiotokError, so the CLI prints one line, exit 2.

:class:`~biotok.errors.DataError` lives in the core (``biotok.errors``) and is re-exported here.
"""

from __future__ import annotations

from biotok.errors import BiotokError, ConfigError, DataError


class TokenizerMismatchError(DataError):
    """Data, tokenizer or checkpoint were made with different vocabularies (fingerprints differ)."""


class OutOfMemoryAtStartError(BiotokError):
    """The first training step did not fit in accelerator memory; says which setting to lower."""


class CompileError(BiotokError):
    """``torch.compile`` failed on the training step; says the root cause and to pass --no-compile."""


__all__ = ["BiotokError", "CompileError", "ConfigError", "DataError", "TokenizerMismatchError",
           "OutOfMemoryAtStartError"]
