"""Give a pretrained masked-LM a new vocabulary: rebuild its embeddings instead of starting over.

``transfer(model_dir, new_tokenizer, TransferConfig(method=...))`` rebuilds the input
embeddings, the tied output embeddings and the MLM output bias of a Hugging Face masked-LM
(BERT, RoBERTa/CamemBERT/XLM-R, ALBERT, DeBERTa-v2/v3, ELECTRA generator + discriminator) for the vocabulary
of any tokenizer ``biotok.load`` reads. Each row of the new vocabulary is one of:

* **copied** -- the piece's marker-free form exists in the old vocabulary with the same
  word-boundary status ('▁mot', 'mot' in WordPiece and 'Ġmot' are one form, word start;
  '##ot', 'ot' in SentencePiece and 'ot' in byte-level BPE are one form, continuation): the old
  row and bias, copied exactly. Forms are compared only when both vocabularies mark the same
  boundary (a word *start* for '▁', '##', 'Ġ'; a word *end* for '</w>');
* **special** -- a special token of the new tokenizer takes the old special token of the same
  role (cls/bos, sep/eos, pad, unk, mask; cls and bos, sep and eos stand in for each other);
* **composed** (``fvt``, Fast Vocabulary Transfer, Gee et al. 2022) -- the mean of the old rows
  (and biases) of the piece's segmentation by the OLD tokenizer. A word-start piece is segmented
  as a word: the old tokenizer's whole pipeline on the form (with a leading space for
  byte-level BPE). A continuation piece is segmented as the inside of a word: the old model
  directly on the normalized form -- WordPiece on ``'##' + form`` (so every piece is a '##'
  continuation), SentencePiece Unigram/BPE on the form without the '▁' prefix, byte-level BPE
  on the byte-mapped form without 'Ġ'. With a '</w>' vocabulary on either side, pieces are
  segmented as words. [UNK] pieces of a segmentation are dropped; a piece whose segmentation is
  empty or all [UNK] (and an unknown byte piece '<0xNN>') is left random;
* **random** -- drawn from the model's own initializer: normal(0, ``config.initializer_range``)
  for the embedding row, 0 for the bias (what ``_init_weights`` does), from a generator seeded
  with ``TransferConfig.seed``. With ``method='random'`` every row that is neither copied nor a
  special token is random (the control arm).

RoBERTa-style models number positions from ``pad_token_id + 1``; when the new pad id differs,
the position embeddings are shifted so every real position keeps its old row.
``write_transfer`` saves the model (safetensors), the new tokenizer (``AutoTokenizer`` loads it
without biotok) and ``transfer.json`` (counts, method, seed, input sha256, versions).
"""

from __future__ import annotations

from biotok_train.config import TRANSFER_METHODS as METHODS
from biotok_train.config import TransferConfig
from biotok_train.transfer.common import FORMAT, MARKER, SUPPORTED, TransferError, TransferResult
from biotok_train.transfer.fvt import KINDS, TransferPlan, plan_transfer, segment_as_old
from biotok_train.transfer.model import check_specials, transfer
from biotok_train.transfer.save import transfer_to, write_transfer

__all__ = ["FORMAT", "KINDS", "MARKER", "METHODS", "SUPPORTED", "TransferConfig", "TransferError", "TransferPlan",
           "TransferResult", "check_specials", "plan_transfer", "segment_as_old", "transfer", "transfer_to",
           "write_transfer"]
