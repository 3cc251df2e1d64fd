"""What every part of the transfer shares: the output marker, the supported models, the error
and the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from biotok.errors import BiotokError
from biotok.tokenizer import BiotokTokenizer
from biotok_train.config import TransferConfig
from biotok_train.transfer.fvt import TransferPlan

FORMAT = "biotok-transfer/1"
MARKER = "transfer.json"  # the file every transfer output holds: --force replaces only those
#: ``config.model_type`` values whose masked-LM heads are handled (input embeddings, tied
#: output embeddings, output bias); the ELECTRA discriminator is transferred with its generator.
SUPPORTED = ("bert", "roberta", "camembert", "xlm-roberta", "albert", "electra", "deberta-v2")


class TransferError(BiotokError):
    """The model directory cannot be transferred (no MLM head, unsupported, unreadable)."""


@dataclass(frozen=True)
class TransferResult:
    """The model with the new vocabulary (in memory), how each row was made, and provenance."""

    model: Any  # the masked-LM (or the ELECTRA discriminator), new vocabulary
    generator: Any | None  # the ELECTRA generator, else None
    tokenizer: BiotokTokenizer  # the new tokenizer
    old_tokenizer: BiotokTokenizer
    config: TransferConfig
    plan: TransferPlan
    provenance: dict = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        return self.plan.counts
