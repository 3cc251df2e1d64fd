"""One tokenizer type for every format: a thin, typed wrapper over ``tokenizers.Tokenizer``.

Types and vocabulary helpers only; reading files and aliases is :mod:`biotok.formats`
(``biotok.load``), which builds these objects.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterable, Sequence

from tokenizers import Tokenizer

from biotok.errors import CorpusError

ROLES = ("pad", "unk", "cls", "sep", "mask", "bos", "eos")
# Fallback special-token strings per role, tried in order when no config names them.
_ROLE_GUESSES: dict[str, tuple[str, ...]] = {
    "pad": ("[PAD]", "<pad>"),
    "unk": ("[UNK]", "<unk>"),
    "cls": ("[CLS]", "<s>"),
    "sep": ("[SEP]", "</s>"),
    "mask": ("[MASK]", "<mask>"),
    "bos": ("<s>", "[CLS]"),
    "eos": ("</s>", "[SEP]"),
}


@dataclass(frozen=True)
class Encoding:
    """A tokenized text: ids, pieces, the word index of each piece and character offsets."""

    ids: list[int]
    pieces: list[str]
    word_ids: list[int | None]
    offsets: list[tuple[int, int]]

    @property
    def word_starts(self) -> list[bool]:
        """True for the first piece of each pre-tokenized word (special tokens are False)."""
        out, prev = [], None
        for w in self.word_ids:
            out.append(w is not None and w != prev)
            prev = w
        return out

    def __len__(self) -> int:
        return len(self.ids)


class BiotokTokenizer:
    """A loaded tokenizer: vocabulary, special tokens by role, and fast (batch) encoding."""

    def __init__(
        self,
        backend: Tokenizer,
        *,
        name: str,
        source: str = "",
        specials: dict[str, str] | None = None,
        marker: str | None = None,
        lowercase: bool | None = None,
    ) -> None:
        self.backend = backend
        self.name = name
        self.source = source
        vocab = backend.get_vocab(with_added_tokens=True)
        given = {k: v for k, v in (specials or {}).items() if v is not None and v in vocab}
        for role in ROLES:
            if role not in given:
                for guess in _ROLE_GUESSES[role]:
                    if guess in vocab:
                        given[role] = guess
                        break
        self.specials: dict[str, str] = given
        self.marker = marker if marker is not None else detect_marker(vocab)
        self.lowercase = lowercase

    # -- vocabulary -------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size(with_added_tokens=True)

    def get_vocab(self) -> dict[str, int]:
        return self.backend.get_vocab(with_added_tokens=True)

    def token_to_id(self, token: str) -> int | None:
        return self.backend.token_to_id(token)

    def id_to_token(self, idx: int) -> str | None:
        return self.backend.id_to_token(idx)

    @property
    def family(self) -> str:
        """'bert' when [CLS]/[SEP] frame sequences, else 'roberta' (<s> ... </s>)."""
        return "bert" if self.specials.get("cls") == "[CLS]" else "roberta"

    def special_id(self, role: str) -> int | None:
        tok = self.specials.get(role)
        return None if tok is None else self.backend.token_to_id(tok)

    @property
    def pad_id(self) -> int | None:
        return self.special_id("pad")

    @property
    def unk_id(self) -> int | None:
        return self.special_id("unk")

    @property
    def cls_id(self) -> int | None:
        return self.special_id("cls")

    @property
    def sep_id(self) -> int | None:
        return self.special_id("sep")

    @property
    def mask_id(self) -> int | None:
        return self.special_id("mask")

    @property
    def special_ids(self) -> set[int]:
        return {i for r in ROLES if (i := self.special_id(r)) is not None}

    @property
    def fingerprint(self) -> str:
        """sha256 of the serialized tokenizer: equal fingerprints segment text identically."""
        return hashlib.sha256(self.backend.to_str().encode("utf-8")).hexdigest()

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, text: str, add_special_tokens: bool = False) -> Encoding:
        try:
            return _wrap(self.backend.encode(text, add_special_tokens=add_special_tokens))
        except (TypeError, UnicodeError):
            _refuse_unencodable([text])
            raise

    def encode_batch(
        self, texts: Sequence[str], add_special_tokens: bool = False
    ) -> list[Encoding]:
        texts = list(texts)
        try:
            encs = self.backend.encode_batch(texts, add_special_tokens=add_special_tokens)
        except (TypeError, UnicodeError):
            _refuse_unencodable(texts)
            raise
        return [_wrap(e) for e in encs]

    def encode_batch_ids(self, texts: Sequence[str], add_special_tokens: bool = False) -> list[list[int]]:
        """Ids only: the fastest path, for counting and data preparation."""
        texts = list(texts)
        try:
            encs = self.backend.encode_batch_fast(texts, add_special_tokens=add_special_tokens) \
                if hasattr(self.backend, "encode_batch_fast") else \
                self.backend.encode_batch(texts, add_special_tokens=add_special_tokens)
        except (TypeError, UnicodeError):
            _refuse_unencodable(texts)
            raise
        return [e.ids for e in encs]

    def tokenize(self, text: str) -> list[str]:
        return self.encode(text).pieces

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        return self.backend.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def __repr__(self) -> str:
        return f"BiotokTokenizer({self.name!r}, vocab_size={self.vocab_size}, marker={self.marker!r})"


def _refuse_unencodable(texts: Sequence[object]) -> None:
    """After the Rust tokenizer refused a text: a :class:`~biotok.errors.CorpusError` saying which
    text and character, when one is not a str or holds a lone surrogate (``"\\ud800"`` from a JSON
    escape or a broken UTF-16 decode: no Unicode character, so no UTF-8 the library can take).
    Refused rather than replaced: the same text read from a UTF-8 file is refused too."""
    for i, text in enumerate(texts):
        where = f"text {i}" if len(texts) > 1 else "the text"
        if not isinstance(text, str):
            raise CorpusError(f"{where} is a {type(text).__name__}, not a str")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise CorpusError(f"{where} holds a lone surrogate U+{ord(text[e.start]):04X} at character {e.start}: "
                              "not a Unicode character (a broken UTF-16 or JSON \\u escape); remove or "
                              "replace it") from None


def _wrap(e) -> Encoding:
    return Encoding(ids=e.ids, pieces=e.tokens, word_ids=e.word_ids, offsets=e.offsets)


def detect_marker(vocab: dict[str, int]) -> str:
    """The piece convention of a vocabulary: '▁' (SentencePiece), '##' (WordPiece), 'Ġ', '</w>'."""
    counts = {"▁": 0, "##": 0, "Ġ": 0, "</w>": 0}
    for piece in vocab:
        if piece.startswith("▁"):
            counts["▁"] += 1
        elif piece.startswith("##") and len(piece) > 2:
            counts["##"] += 1
        elif piece.startswith("Ġ"):
            counts["Ġ"] += 1
        elif piece.endswith("</w>"):
            counts["</w>"] += 1
    return max(counts, key=lambda k: counts[k])
