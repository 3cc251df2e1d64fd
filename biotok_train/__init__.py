"""biotok_train: pretrain (BERT MLM/WWM, ALBERT SOP, ELECTRA RTD), fine-tune and evaluate models
on any biotok vocabulary. Needs the ``[train]`` extra (torch, transformers, seqeval)."""

from __future__ import annotations

__all__: list[str] = []
