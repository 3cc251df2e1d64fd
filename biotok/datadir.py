"""The one data-folder lookup: where local reference tokenizers and corpora live.

One environment variable, ``BIOTOK_SHARED_DATA``, names the folder holding ``tokenizers/`` and
``corpora/`` (``../shared/data`` beside a checkout). An explicit path (a command-line option)
always wins; nothing is guessed from where biotok is installed.

``BIOTOK_TOKENIZERS_DIR`` (the tokenizers folder alone) is still read, as the older name.
"""

from __future__ import annotations

import os
from pathlib import Path

from biotok.errors import ConfigError

ENV = "BIOTOK_SHARED_DATA"
TOKENIZERS_ENV = "BIOTOK_TOKENIZERS_DIR"  # older name, for the tokenizers folder only

PathLike = str | os.PathLike[str]


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def shared_data() -> Path | None:
    """The folder named by ``$BIOTOK_SHARED_DATA``, or None when it is unset; a value that is not
    a folder is a :class:`~biotok.errors.ConfigError` naming the variable (not a lookup that fails
    later under a path nobody set)."""
    p = _env_path(ENV)
    if p is not None and not p.is_dir():
        what = "is not a folder" if p.exists() else "does not exist"
        raise ConfigError(f"{ENV}={p}: {what}; set it to the folder holding tokenizers/ and corpora/, or unset it")
    return p


def tokenizers_dir(explicit: PathLike | None = None) -> Path | None:
    """Local tokenizer copies: ``explicit``, else ``$BIOTOK_TOKENIZERS_DIR``, else
    ``$BIOTOK_SHARED_DATA/tokenizers``, else None."""
    if explicit is not None:
        return Path(explicit).expanduser()
    legacy = _env_path(TOKENIZERS_ENV)
    if legacy is not None:
        return legacy
    base = shared_data()
    return base / "tokenizers" if base is not None else None


def corpora_dir(explicit: PathLike | None = None) -> Path | None:
    """Local corpora (datasets): ``explicit``, else ``$BIOTOK_SHARED_DATA/corpora``, else None."""
    if explicit is not None:
        return Path(explicit).expanduser()
    base = shared_data()
    return base / "corpora" if base is not None else None


__all__ = ["ENV", "TOKENIZERS_ENV", "corpora_dir", "shared_data", "tokenizers_dir"]
