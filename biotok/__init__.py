"""biotok: choose, build and prove a biomedical vocabulary before you pretrain on it.

Public API (all plain data in, plain data out):

- :func:`normalize` -- the French biomedical normalization spec, str -> str.
- :func:`train_tokenizer` -- train a tokenizer artifact (Unigram, BPE, WordPiece, SentencePiece).
- :func:`extend` -- add a domain's pieces to a pretrained tokenizer, every base id kept.
- :func:`load` -- load any tokenizer (biotok artifact, HF dir/tokenizer.json, .model, vocab.txt, alias).
- :func:`diff_vocab`, :func:`fragmentation`, :func:`compare` -- vocabulary and fragmentation analysis.

Importing biotok never imports torch or transformers.
"""

from __future__ import annotations

import importlib
from typing import Any

from biotok._version import __version__
from biotok.errors import BiotokError

# Eager, and light (regex + unicodedata): the function must shadow the submodule of that name.
from biotok.normalize import normalize

#: public name -> (module, attribute), imported on first use so `import biotok` stays cheap
#: (no tokenizers, numpy or matplotlib until a function needs them; never torch)
_LAZY: dict[str, tuple[str, str]] = {
    "NormalizeConfig": ("biotok.config", "NormalizeConfig"),
    "TrainConfig": ("biotok.config", "TrainConfig"),
    "train_tokenizer": ("biotok.train", "train_tokenizer"),
    "extend": ("biotok.extension", "extend"),
    "ExtendConfig": ("biotok.extension", "ExtendConfig"),
    "load": ("biotok.formats", "load"),
    "diff_vocab": ("biotok.vocab", "diff_vocab"),
    "fragmentation": ("biotok.metrics", "fragmentation"),
    "compare": ("biotok.metrics", "compare"),
}

__all__ = ["__version__", "BiotokError", "normalize", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'biotok' has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
