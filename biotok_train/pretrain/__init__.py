"""Pretraining: tokenize a corpus once (:mod:`.prepare`), read it as packed batches (:mod:`.packed`),
mask it (:mod:`.masking`), build the model (:mod:`.models`, :mod:`.electra`) and train it
(:mod:`.loop`, with :mod:`.checkpoint` and :mod:`.distributed`).

The verb: ``from biotok_train.pretrain import pretrain`` (:func:`.loop.pretrain`). Importing this
package is cheap: ``pretrain`` is imported from :mod:`.loop` (and torch with it) on first use,
and the submodules other than ``prepare`` import torch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["pretrain"]


def __getattr__(name: str) -> Any:
    if name == "pretrain":  # imported here, not at the top, to keep torch out of `import biotok_train.pretrain`
        from biotok_train.pretrain.loop import pretrain

        return pretrain
    raise AttributeError(f"module 'biotok_train.pretrain' has no attribute {name!r}")
