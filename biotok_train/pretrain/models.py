"""Model configs by size and the training modules (MLM, ALBERT MLM+SOP) built on ``transformers``.

A training module's ``forward`` returns the loss and metrics of one batch; it computes the
vocabulary projection only at the masked positions (15 % of tokens), which is where most of
the speed over a plain ``BertForMaskedLM(labels=...)`` comes from on small models.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from biotok.errors import ConfigError
from biotok_train.config import SIZES, Shape
from biotok_train.pretrain.feed import accuracy, select_positions

@dataclass(frozen=True)
class Vocab:
    """What a model config needs from the tokenizer."""

    size: int
    pad_id: int
    cls_id: int
    sep_id: int
    mask_id: int


def shape(arch: str, size: str) -> Shape:
    if arch not in SIZES:
        raise ConfigError(f"unknown architecture {arch!r} (choose {', '.join(SIZES)})")
    if size not in SIZES[arch]:
        raise ConfigError(f"unknown size {size!r} for {arch} (choose {', '.join(SIZES[arch])})")
    return SIZES[arch][size]


def _common(vocab: Vocab, seq_len: int) -> dict:
    return dict(
        vocab_size=vocab.size,
        pad_token_id=vocab.pad_id,
        bos_token_id=vocab.cls_id,
        eos_token_id=vocab.sep_id,
        max_position_embeddings=max(512, seq_len),
        type_vocab_size=2,
        attn_implementation="sdpa",
    )


def bert_config(size: str, vocab: Vocab, seq_len: int):
    from transformers import BertConfig

    n, h, a, i, _ = shape("bert", size)
    return BertConfig(num_hidden_layers=n, hidden_size=h, num_attention_heads=a, intermediate_size=i,
                      **_common(vocab, seq_len))


def albert_config(size: str, vocab: Vocab, seq_len: int):
    from transformers import AlbertConfig

    n, h, a, i, e = shape("albert", size)
    return AlbertConfig(num_hidden_layers=n, hidden_size=h, num_attention_heads=a, intermediate_size=i,
                        embedding_size=e, num_hidden_groups=1, inner_group_num=1, hidden_act="gelu_new",
                        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                        **_common(vocab, seq_len))


def electra_configs(size: str, vocab: Vocab, seq_len: int, generator_ratio: float = 1 / 3):
    """(discriminator, generator) configs; generator hidden = ratio × hidden, heads of 64 dims."""
    from transformers import ElectraConfig

    n, h, a, i, e = shape("electra", size)
    emb = e or h
    disc = ElectraConfig(num_hidden_layers=n, hidden_size=h, num_attention_heads=a, intermediate_size=i,
                         embedding_size=emb, **_common(vocab, seq_len))
    gh = max(16, int(round(h * generator_ratio / 16)) * 16)
    gen = ElectraConfig(num_hidden_layers=n, hidden_size=gh, num_attention_heads=max(1, gh // 64),
                        intermediate_size=4 * gh, embedding_size=emb, **_common(vocab, seq_len))
    return disc, gen


def count_params(module: nn.Module, *, embeddings: bool = True) -> int:
    seen, total = set(), 0
    for name, p in module.named_parameters():
        if id(p) in seen or (not embeddings and "embeddings" in name):
            continue
        seen.add(id(p))
        total += p.numel()
    return total


class MLMModule(nn.Module):
    """BERT (or RoBERTa/CamemBERT, continued with ``--init-from``) MLM, or ALBERT MLM +
    sentence-order prediction; loss only at selected positions."""

    def __init__(self, model: nn.Module, arch: str) -> None:
        super().__init__()
        self.model = model
        self.arch = arch
        # RoBERTa-style models have one token type: segment B is fed as type 0
        self.one_type = int(getattr(model.config, "type_vocab_size", 2)) < 2

    def forward(self, input_ids, attention_mask, token_type_ids, labels, sop_labels=None, original_ids=None,
                positions=None):
        if self.arch == "albert":
            out = self.model.albert(input_ids=input_ids, attention_mask=attention_mask,
                                    token_type_ids=token_type_ids)
            h, y = select_positions(out[0], labels, positions)
            logits = self.model.predictions(h)
            mlm = F.cross_entropy(logits.float(), y)
            sop_logits = self.model.sop_classifier(out[1])
            sop = F.cross_entropy(sop_logits.float(), sop_labels)
            loss = mlm + sop
            extra = {"sop_loss": sop.detach(),
                     "sop_acc": (sop_logits.argmax(-1) == sop_labels).float().mean().detach()}
        else:
            if self.one_type:
                token_type_ids = torch.zeros_like(token_type_ids)
            hidden = self.model.base_model(input_ids=input_ids, attention_mask=attention_mask,
                                           token_type_ids=token_type_ids)[0]
            h, y = select_positions(hidden, labels, positions)
            logits = self.model.cls(h) if self.arch == "bert" else self.model.lm_head(h)
            loss = mlm = F.cross_entropy(logits.float(), y)
            extra = {}
        return {"loss": loss, "mlm_loss": mlm.detach(), "mlm_acc": accuracy(logits, y).detach(), **extra}


def build(objective: str, arch: str, size: str, vocab: Vocab, seq_len: int, *,
          generator_ratio: float = 1 / 3, rtd_weight: float = 50.0) -> nn.Module:
    """The training module for an objective ('mlm' or 'electra') and architecture."""
    if objective == "electra":
        from biotok_train.pretrain.electra import ElectraModule

        disc, gen = electra_configs(size, vocab, seq_len, generator_ratio)
        return ElectraModule(disc, gen, rtd_weight=rtd_weight)
    if objective != "mlm":
        raise ConfigError(f"unknown objective {objective!r} (mlm or electra)")
    if arch == "bert":
        from transformers import BertForMaskedLM

        return MLMModule(BertForMaskedLM(bert_config(size, vocab, seq_len)), "bert")
    if arch == "albert":
        from transformers import AlbertForPreTraining

        return MLMModule(AlbertForPreTraining(albert_config(size, vocab, seq_len)), "albert")
    raise ConfigError(f"unknown architecture {arch!r} (bert or albert)")


def main_model(module: nn.Module) -> nn.Module:
    """The model saved as the run's result (the discriminator for ELECTRA)."""
    return module.discriminator if hasattr(module, "discriminator") else module.model
