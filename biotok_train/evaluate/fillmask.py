"""Fill-mask: top-k fillers for ``<mask>``/``[MASK]`` in a sentence, and a cloze-set score.

The cloze set (corpora/cloze/fr_medical_cloze.tsv: ``sentence with <mask><TAB>expected word``)
is scored like eval-mlm: the expected word is put in place of the mask, masked whole, and
filled by beam search, so a word of several pieces can be found (see docs/evaluation.md).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from biotok.errors import ConfigError, CorpusError
from biotok.tokenizer import BiotokTokenizer
from biotok_train.evaluate.masked_words import KS, MlmResult, WordSample, masked_word_accuracy
from biotok_train.hf_models import frame_ids

MASKS = re.compile(r"<mask>|\[MASK\]")


@dataclass(frozen=True)
class Filler:
    """One candidate piece at a mask: the piece, its text once decoded, its probability."""

    piece: str
    text: str
    prob: float


def fill_mask(model, tok: BiotokTokenizer, text: str, k: int = 5) -> list[list[Filler]]:
    """For each ``<mask>`` or ``[MASK]`` in ``text`` (any mix), the ``k`` most probable pieces."""
    import torch

    if k < 1:
        raise ConfigError("--top-k must be at least 1")
    parts = MASKS.split(text)
    if len(parts) < 2:
        raise ConfigError("the text has no <mask> or [MASK]")
    if tok.mask_id is None:
        raise ConfigError(f"{tok.name}: the tokenizer has no mask token")
    start_id, end_id, _ = frame_ids(tok)
    ids, positions = [start_id], []
    for i, part in enumerate(parts):
        if part.strip():
            # the text around a mask keeps its own spaces: encode it as written
            ids.extend(tok.encode(part.strip()).ids)
        if i < len(parts) - 1:
            positions.append(len(ids))
            ids.append(tok.mask_id)
    ids.append(end_id)
    positions_max = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if positions_max is not None and len(ids) > positions_max:
        raise ConfigError(f"the text is {len(ids)} pieces long, more than the model's {positions_max} "
                          "positions: shorten it around the mask")
    with torch.no_grad():
        device = next(model.parameters()).device
        logits = model(input_ids=torch.tensor([ids], device=device)).logits[0]
    probs = torch.softmax(logits[positions].float(), dim=-1)
    probs[:, sorted(tok.special_ids)] = 0.0
    k = min(k, probs.shape[-1] - len(tok.special_ids))  # --top-k beyond the vocabulary: every piece
    out = []
    for row in probs:
        top = row.topk(k)
        out.append([
            Filler(tok.id_to_token(int(t)) or "", tok.decode([int(t)]).strip(), float(p))
            for p, t in zip(top.values.tolist(), top.indices.tolist())
        ])
    return out


def read_cloze(path: str | os.PathLike[str]) -> list[WordSample]:
    """Cloze lines 'sentence with one <mask>\\texpected word' ('#' comments) as word samples."""
    p = Path(path)
    if not p.is_file():
        raise CorpusError(f"cloze file not found: {p}")
    data = p.read_bytes()
    if b"\x00" in data:
        raise CorpusError(f"{p} is a binary file, not a cloze TSV ('sentence with <mask><TAB>word' lines)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise CorpusError(f"{p}:{line}: invalid UTF-8; a cloze file is UTF-8 text") from None
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[1].strip():
            raise CorpusError(f"{p}:{lineno}: expected 'sentence<TAB>word', got {line[:60]!r}")
        sent, word = parts[0].strip(), parts[1].strip()
        if len(MASKS.findall(sent)) != 1:
            raise CorpusError(f"{p}:{lineno}: the sentence needs exactly one <mask>")
        m = MASKS.search(sent)
        assert m is not None
        text = sent[: m.start()] + word + sent[m.end():]
        out.append(WordSample(text, m.start(), m.start() + len(word), lineno))
    if not out:
        raise CorpusError(f"{p}: no cloze sentence")
    return out


def cloze_accuracy(model, tok: BiotokTokenizer, path: str | os.PathLike[str], ks: Sequence[int] = KS,
                   name: str = "") -> MlmResult:
    """Whole-word top-k accuracy on a cloze file (same rules as eval-mlm)."""
    return masked_word_accuracy(model, tok, read_cloze(path), ks, name=name or tok.name)


def format_fillers(text: str, fillers: list[list[Filler]]) -> str:
    """The text, then one line per mask with its fillers and their probabilities."""
    lines = [text]
    for i, row in enumerate(fillers, 1):
        lines.append(f"  mask {i}: " + "  ".join(f"{f.text or f.piece} ({f.prob:.3f})" for f in row))
    return "\n".join(lines)
