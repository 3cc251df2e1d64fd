"""ELECTRA replaced-token detection (Clark et al. 2020), following google-research/electra.

* the generator is a small MLM (hidden 1/3 of the discriminator's), trained jointly;
* generator and discriminator share all embeddings (token, position, type, LayerNorm);
  the generator's output layer is tied to the token embeddings;
* replacements are sampled from the generator's softmax with Gumbel noise
  (argmax(logits + G), temperature 1), under ``no_grad``: no gradient through sampling; the loop
  passes the predicted positions padded to a bucket size (``positions``), so the noise is drawn
  over a static shape and the step compiles (with a boolean selection, the next step's other
  number of masked tokens made torch.compile recompile with a symbolic shape, over which inductor
  cannot lower ``torch.rand_like``); the padding rows' samples are discarded;
* a sampled token equal to the original counts as *original* for the discriminator;
* loss = MLM(generator) + 50 × BCE(discriminator over every non-padding token).

Speed: ELECTRA-small trained at 1 % MFU on an H200 (133-147 k tokens/s compiled) where BERT-small
reached 5-9 %. Its step runs 24 thin layers (12 discriminator of width 256, 12 generator of 80)
against BERT-small's 4 of 512: 0.78x the FLOPs per token but 5.5x the operators per step, and the
compiled step took 5.0x as long, so it is bound by kernel launches, not arithmetic (no graph break,
no host sync when compiled; the MFU counts both models). Counts and sources:
``python -m benchmarks.speed.electra_cost`` (benchmarks/results/electra_cost.json).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from biotok_train.pretrain.feed import accuracy, select_positions


def gumbel_sample(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One sample per row from softmax(logits) by the Gumbel-max trick."""
    u = torch.rand_like(logits, dtype=torch.float32, generator=generator)  # rand_like: traceable by torch.compile
    g = -torch.log(-torch.log(u.clamp_(1e-9, 1.0 - 1e-7)))
    return (logits.float() + g).argmax(dim=-1)


class ElectraModule(nn.Module):
    """Generator + discriminator with shared embeddings; forward returns the joint loss."""

    def __init__(self, disc_config, gen_config, *, rtd_weight: float = 50.0) -> None:
        super().__init__()
        from transformers import ElectraForMaskedLM, ElectraForPreTraining

        self.discriminator = ElectraForPreTraining(disc_config)
        self.generator = ElectraForMaskedLM(gen_config)
        self.generator.electra.embeddings = self.discriminator.electra.embeddings
        self.generator.generator_lm_head.weight = self.discriminator.electra.embeddings.word_embeddings.weight
        self.rtd_weight = rtd_weight

    def forward(self, input_ids, attention_mask, token_type_ids, labels, sop_labels=None, original_ids=None,
                positions=None):
        gen_hidden = self.generator.electra(input_ids=input_ids, attention_mask=attention_mask,
                                            token_type_ids=token_type_ids)[0]
        h, y = select_positions(gen_hidden, labels, positions)
        logits = self.generator.generator_lm_head(self.generator.generator_predictions(h))
        mlm = F.cross_entropy(logits.float(), y)
        with torch.no_grad():
            sampled = gumbel_sample(logits.detach())
            corrupted = _replace(original_ids, labels, sampled, y, positions)
            replaced = (corrupted != original_ids).float()
        disc_logits = self.discriminator(input_ids=corrupted, attention_mask=attention_mask,
                                         token_type_ids=token_type_ids).logits
        weight = attention_mask.float()
        disc = (F.binary_cross_entropy_with_logits(disc_logits.float(), replaced, reduction="none")
                * weight).sum() / weight.sum()
        loss = mlm + self.rtd_weight * disc
        with torch.no_grad():
            disc_acc = (((disc_logits > 0).float() == replaced).float() * weight).sum() / weight.sum()
            gen_acc = accuracy(logits, y)
        return {"loss": loss, "mlm_loss": mlm.detach(), "mlm_acc": gen_acc, "rtd_loss": disc.detach(),
                "rtd_acc": disc_acc, "replaced": replaced.sum() / (labels != -100).sum().clamp(min=1)}


def _replace(original_ids, labels, sampled, y, positions):
    """``original_ids`` with the sampled tokens at the predicted positions (a padding position of
    ``positions``, label -100, keeps its original token)."""
    if positions is None:
        corrupted = original_ids.clone()
        corrupted[labels != -100] = sampled
        return corrupted
    flat = original_ids.flatten()
    values = torch.where(y != -100, sampled, flat.index_select(0, positions))
    return flat.scatter(0, positions, values).view_as(original_ids)
