"""The transfer plan: where each row of the new vocabulary comes from (copied, special, composed
by FVT, or random). Pure vocabulary work: no model, no torch."""

from __future__ import annotations

import re
from dataclasses import dataclass

from biotok.errors import ConfigError
from biotok.tokenizer import BiotokTokenizer
from biotok.vocab import split_marker
from biotok_train.config import TRANSFER_METHODS

KINDS = ("copied", "special", "composed", "random")
_WORD_START_MARKERS = ("▁", "##", "Ġ")
_DUMMY = "a"  # glued before a continuation piece to segment it as the inside of a word
_BYTE_PIECE = re.compile(r"^<0x[0-9A-Fa-f]{2}>$")
# the role a special token is matched on, first found wins; then the stand-ins
_ROLE_ORDER = ("cls", "sep", "mask", "pad", "unk", "bos", "eos")
_STAND_IN = {"cls": "bos", "bos": "cls", "sep": "eos", "eos": "sep"}


@dataclass(frozen=True)
class TransferPlan:
    """Where each row of the new vocabulary comes from: a kind and the old ids averaged."""

    kinds: tuple[str, ...]  # per new id: copied | special | composed | random
    sources: tuple[tuple[int, ...], ...]  # per new id: old ids (one for copied/special, () random)

    def count(self, kind: str) -> int:
        return sum(1 for k in self.kinds if k == kind)

    @property
    def counts(self) -> dict[str, int]:
        return {k: self.count(k) for k in KINDS}


def _boundary_kind(marker: str) -> str:
    return "start" if marker in _WORD_START_MARKERS else "end"


def _special_tokens(tok: BiotokTokenizer) -> dict[int, str]:
    """id -> content of every special token: the roles plus added tokens flagged special."""
    out: dict[int, str] = {}
    for token in tok.specials.values():
        i = tok.token_to_id(token)
        if i is not None:
            out[i] = token
    for i, t in tok.backend.get_added_tokens_decoder().items():
        if t.special:
            out[i] = t.content
    return out


def _old_role_id(old: BiotokTokenizer, new: BiotokTokenizer, token: str) -> int | None:
    """The old special token id of the first role that ``token`` plays in the new tokenizer."""
    roles = [r for r in _ROLE_ORDER if new.specials.get(r) == token]
    for r in roles + [_STAND_IN[r] for r in roles if r in _STAND_IN]:
        i = old.special_id(r)
        if i is not None:
            return i
    return None


def _normalized(tok: BiotokTokenizer, text: str) -> str:
    n = tok.backend.normalizer
    return n.normalize_str(text) if n is not None else text


def segment_as_old(old: BiotokTokenizer, form: str, word_start: bool) -> list[int]:
    """Old ids of ``form`` segmented by the old tokenizer as a word or as a word's inside.

    A word: the old pipeline on ``form`` (' ' + form for byte-level BPE). The inside of a word:
    the old pre-tokenizer on a dummy letter + ``form`` tells what stays glued to the word (for
    BERT, punctuation starts a word of its own); the glued part is segmented by the old model as
    a continuation (WordPiece on '##' + part, SentencePiece and byte-level BPE on the part
    without '▁'/'Ġ'), the rest as words. [UNK] ids are kept (the caller drops them).
    """
    marker = old.marker
    if word_start or marker == "</w>":
        text = " " + form if marker == "Ġ" else form
        return list(old.backend.encode(text, add_special_tokens=False).ids)
    model = old.backend.model
    pre = old.backend.pre_tokenizer
    glued = _normalized(old, _DUMMY + form)
    chunks = [c for c, _ in pre.pre_tokenize_str(glued)] if pre is not None else [glued.replace(" ", "▁")]
    if not chunks:
        return []
    first = chunks[0].lstrip("▁Ġ")
    if not first.startswith(_DUMMY):  # pragma: no cover - a normalizer that rewrites the dummy
        return list(old.backend.encode(form, add_special_tokens=False).ids)
    inside, rest = first[len(_DUMMY):], chunks[1:]
    ids: list[int] = []
    if inside:
        if marker == "##":
            prefix = getattr(model, "continuing_subword_prefix", "##") or "##"
            toks = model.tokenize(prefix + inside)
            if not toks or any(not t.value.startswith(prefix) for t in toks):
                ids.append(old.unk_id if old.unk_id is not None else -1)
            else:
                ids.extend(t.id for t in toks)
        else:
            ids.extend(t.id for t in model.tokenize(inside))
    for chunk in rest:
        ids.extend(t.id for t in model.tokenize(chunk))
    return [i for i in ids if i >= 0]


def plan_transfer(old: BiotokTokenizer, new: BiotokTokenizer, method: str = "fvt") -> TransferPlan:
    """For each new id: copied (same form and boundary), special (by role), composed or random."""
    if method not in TRANSFER_METHODS:
        raise ConfigError(f"unknown transfer method {method!r} (choose {', '.join(TRANSFER_METHODS)})")
    old_specials = _special_tokens(old)
    new_specials = _special_tokens(new)
    same_boundary = _boundary_kind(old.marker) == _boundary_kind(new.marker)
    old_forms: dict[tuple[str, bool], int] = {}
    for piece, i in sorted(old.get_vocab().items(), key=lambda kv: kv[1]):
        if i in old_specials:
            continue
        form, boundary = split_marker(piece, old.marker)
        if form:
            old_forms.setdefault((form, boundary), i)
    old_vocab = old.get_vocab()
    unk = old.unk_id
    n = new.vocab_size
    kinds: list[str] = ["random"] * n
    sources: list[tuple[int, ...]] = [()] * n
    id_to_piece = {i: p for p, i in new.get_vocab().items()}
    for i in range(n):
        piece = id_to_piece.get(i)
        if piece is None:
            continue
        if i in new_specials:
            j = _old_role_id(old, new, piece)
            if j is None and piece in old_vocab:  # an added special without a role, same string
                j = old_vocab[piece]
            if j is not None:
                kinds[i], sources[i] = "special", (j,)
            continue
        form, boundary = split_marker(piece, new.marker)
        if not form:  # the bare marker: a word boundary, not a spelling
            if piece in old_vocab:
                kinds[i], sources[i] = "copied", (old_vocab[piece],)
            continue
        j = old_forms.get((form, boundary)) if same_boundary else None
        if j is not None:
            kinds[i], sources[i] = "copied", (j,)
            continue
        if method != "fvt" or _BYTE_PIECE.match(piece):
            continue
        word_start = boundary if _boundary_kind(new.marker) == "start" else True
        ids = tuple(x for x in segment_as_old(old, form, word_start) if x != unk)
        if ids:
            kinds[i], sources[i] = "composed", ids
    return TransferPlan(tuple(kinds), tuple(sources))
