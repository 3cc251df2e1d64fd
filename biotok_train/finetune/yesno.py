"""Yes/no/maybe question answering (PubMedQA) as pair classification: a :class:`YesNoTask`.

The model reads ``[CLS] question [SEP] context [SEP]`` (segment ids 0 then 1 where the model
has segment embeddings), cut longest-first to ``max_length`` pieces, and classifies the [CLS]
state into the task's labels (``AutoModelForSequenceClassification``). PubMedQA's context is
the abstract without its conclusion (BLURB's reasoning-required setting). Benchmark metric:
accuracy (macro F1 in the details).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from biotok.tokenizer import BiotokTokenizer
from biotok_train.finetune.classify import ClassifyTask
from biotok_train.finetune.common import encode_pairs, uses_token_types
from biotok_train.finetune.batches import pad_rows


@dataclass(frozen=True)
class _Pair:
    input_ids: list[int]
    token_type_ids: list[int]
    label: int


def collate_pairs(features: Sequence, pad_id: int, token_types: bool) -> dict:
    """input_ids, attention_mask (and token_type_ids when the model has them) of pair features."""
    ids, mask = pad_rows([f.input_ids for f in features], pad_id)
    batch = {"input_ids": ids, "attention_mask": mask}
    if token_types:
        batch["token_type_ids"] = pad_rows([f.token_type_ids for f in features], 0)[0]
    return batch


class YesNoTask(ClassifyTask):
    """A question and its context to one of the labels (yes / no / maybe)."""

    name = "yesno-qa"
    token_types = False

    def setup(self, tok: BiotokTokenizer, model) -> None:
        """Segment ids only for models with segment embeddings (BERT, ELECTRA; not RoBERTa-style)."""
        self.token_types = uses_token_types(model)

    def encode(self, tok: BiotokTokenizer, examples: Sequence, labels: list[str], max_length: int) -> list:
        lid = {l: i for i, l in enumerate(labels)}
        pairs = encode_pairs(tok, [e.question for e in examples], [e.context for e in examples], max_length)
        return [_Pair(ids, types, lid[e.label]) for (ids, types), e in zip(pairs, examples)]

    def collate(self, features: Sequence[_Pair], pad_id: int) -> dict:
        import torch

        batch = collate_pairs(features, pad_id, self.token_types)
        batch["labels"] = torch.tensor([f.label for f in features], dtype=torch.long)
        return batch


__all__ = ["YesNoTask", "collate_pairs"]
