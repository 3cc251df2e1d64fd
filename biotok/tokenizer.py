"""One tokenizer object for every format: a thin, typed wrapper over ``tokenizers.Tokenizer``.

``load()`` accepts a biotok artifact or HF tokenizer directory, a bare ``tokenizer.json``
(optionally ``.gz``); other formats and aliases are resolved in :mod:`biotok.loaders`
and :mod:`biotok.hub`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from tokenizers import Tokenizer

from biotok.errors import TokenizerLoadError

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
class Encoded:
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
    def encode(self, text: str, add_special_tokens: bool = False) -> Encoded:
        return _wrap(self.backend.encode(text, add_special_tokens=add_special_tokens))

    def encode_batch(
        self, texts: Sequence[str], add_special_tokens: bool = False
    ) -> list[Encoded]:
        encs = self.backend.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        return [_wrap(e) for e in encs]

    def encode_batch_ids(self, texts: Sequence[str], add_special_tokens: bool = False) -> list[list[int]]:
        """Ids only: the fastest path, for counting and data preparation."""
        encs = self.backend.encode_batch_fast(list(texts), add_special_tokens=add_special_tokens) \
            if hasattr(self.backend, "encode_batch_fast") else \
            self.backend.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        return [e.ids for e in encs]

    def tokenize(self, text: str) -> list[str]:
        return self.backend.encode(text, add_special_tokens=False).tokens

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        return self.backend.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def __repr__(self) -> str:
        return f"BiotokTokenizer({self.name!r}, vocab_size={self.vocab_size}, marker={self.marker!r})"


def _wrap(e) -> Encoded:
    return Encoded(ids=e.ids, pieces=e.tokens, word_ids=e.word_ids, offsets=e.offsets)


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


def read_tokenizer_json(path: str | os.PathLike[str]) -> Tokenizer:
    """Parse a tokenizer.json (or .json.gz) with a clear error when it is not one."""
    p = str(path)
    try:
        if p.endswith(".gz"):
            with gzip.open(p, "rt", encoding="utf-8") as f:
                text = f.read()
        else:
            text = Path(p).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TokenizerLoadError(f"tokenizer file not found: {p}") from None
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise TokenizerLoadError(f"cannot read tokenizer file {p}: {e}") from None
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        raise TokenizerLoadError(f"{p} is not valid JSON (line {e.lineno}: {e.msg})") from None
    try:
        return Tokenizer.from_str(text)
    except Exception as e:  # the Rust parser raises a bare Exception
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise TokenizerLoadError(f"{p} is not a tokenizers tokenizer.json: {first}") from None


def read_special_tokens(directory: str | os.PathLike[str]) -> dict[str, str]:
    """Special tokens by role from tokenizer_config.json / special_tokens_map.json, if present."""
    out: dict[str, str] = {}
    d = Path(directory)
    for fname in ("special_tokens_map.json", "tokenizer_config.json"):
        f = d / fname
        if not f.is_file():
            continue
        try:
            cfg = json.loads(f.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise TokenizerLoadError(f"{f} is not valid JSON: {e}") from None
        for role in ROLES:
            v = cfg.get(f"{role}_token")
            if isinstance(v, dict):
                v = v.get("content")
            if isinstance(v, str) and role not in out:
                out[role] = v
    return out


def load_hf(path: str | os.PathLike[str], name: str | None = None) -> BiotokTokenizer:
    """Load a HF tokenizer directory (tokenizer.json inside) or a bare tokenizer.json[.gz]."""
    p = Path(path)
    if p.is_dir():
        for candidate in ("tokenizer.json", "tokenizer.json.gz"):
            if (p / candidate).is_file():
                backend = read_tokenizer_json(p / candidate)
                specials = read_special_tokens(p)
                lowercase = _artifact_lowercase(p)
                return BiotokTokenizer(
                    backend, name=name or p.name, source=str(p), specials=specials, lowercase=lowercase
                )
        raise TokenizerLoadError(f"{p} has no tokenizer.json")
    backend = read_tokenizer_json(p)
    specials = read_special_tokens(p.parent)
    stem = p.name.split(".")[0]
    return BiotokTokenizer(backend, name=name or (p.parent.name if stem == "tokenizer" else stem), source=str(p), specials=specials)


def _artifact_lowercase(directory: Path) -> bool | None:
    meta = directory / "biotok.json"
    if not meta.is_file():
        return None
    try:
        cfg = json.loads(meta.read_text(encoding="utf-8"))
        return bool(cfg["config"]["normalize"]["lowercase"])
    except (KeyError, json.JSONDecodeError, TypeError):
        return None


def load(name_or_path: str | os.PathLike[str], **kwargs) -> BiotokTokenizer:
    """Load any tokenizer: artifact/HF dir, tokenizer.json[.gz], .model, vocab.txt, vocab.json+merges, alias."""
    from biotok.loaders import load_any

    return load_any(name_or_path, **kwargs)
