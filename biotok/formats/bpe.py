"""A BPE ``vocab.json`` + ``merges.txt`` pair: GPT-2 byte-level ('Ġ') or FlauBERT/XLM ('</w>')."""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers

from biotok.errors import TokenizerLoadError
from biotok.formats.hf import parse_json, read_json_config, read_special_tokens
from biotok.formats.wordpiece import SPECIAL_RE, vocab_is_lowercase
from biotok.tokenizer import BiotokTokenizer

Merges = list[tuple[str, str]]


def read_bpe_files(vocab_path: Path, merges_path: Path) -> tuple[dict[str, int], Merges]:
    """Parse a BPE vocab.json and merges.txt (a '#version' header and count columns are allowed)."""
    try:
        vocab = parse_json(vocab_path.read_text(encoding="utf-8"), vocab_path, "BPE vocab.json")
    except (OSError, UnicodeDecodeError) as e:
        raise TokenizerLoadError(f"cannot read {vocab_path}: {e}") from e
    if not isinstance(vocab, dict) or not vocab or not all(
        isinstance(k, str) and isinstance(v, int) for k, v in vocab.items()
    ):
        raise TokenizerLoadError(f"{vocab_path} is not a BPE vocabulary (expected a JSON object piece -> id)")
    merges: Merges = []
    try:
        text = merges_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TokenizerLoadError(f"cannot read {merges_path}: {e}") from e
    for i, line in enumerate(text.split("\n")):
        if not line or (i == 0 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
            raise TokenizerLoadError(f"{merges_path}:{i + 1}: expected 'left right' (a BPE merge), got {line[:60]!r}")
        merges.append((parts[0], parts[1]))
    if not merges:
        raise TokenizerLoadError(f"{merges_path} has no merges")
    return vocab, merges


def is_flat_vocab(f: Path) -> bool:
    """True when a .json file is a flat {piece: id} map (a BPE vocab.json), not a tokenizer.json."""
    if f.name.endswith(".gz") or f.stat().st_size > 64 << 20:
        return False
    try:
        obj = json.loads(f.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return False  # load_hf gives the precise parse error
    return isinstance(obj, dict) and bool(obj) and all(isinstance(v, int) for v in list(obj.values())[:100])


def _known_merges(vocab: dict[str, int], merges: Merges) -> Merges:
    """Merges whose parts and result are all in the vocabulary.

    XLM-style merges.txt may hold a few merges whose result was cut from vocab.json (FlauBERT:
    4 of 50,000); the original emits <unk> there, ``tokenizers`` cannot: they are dropped.
    """
    return [(a, b) for a, b in merges if a + b in vocab and a in vocab and b in vocab]


def _end_of_word(vocab: dict[str, int], merges: Merges, lower: bool) -> Tokenizer:
    """XLM/FlauBERT: NFC (+ lowercase), Moses-like pre-tokenization, '</w>' word ends."""
    unk = next((u for u in ("<unk>", "[UNK]") if u in vocab), None)
    backend = Tokenizer(models.BPE(vocab, _known_merges(vocab, merges), unk_token=unk, end_of_word_suffix="</w>"))
    backend.normalizer = normalizers.Sequence([normalizers.NFC()] + ([normalizers.Lowercase()] if lower else []))
    # XLM/FlauBERT use the Moses tokenizer: whitespace words, punctuation split off
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation("isolated")]
    )
    backend.decoder = decoders.BPEDecoder(suffix="</w>")
    return backend


def _byte_level(vocab: dict[str, int], merges: Merges, lower: bool) -> Tokenizer:
    """GPT-2 / RoBERTa: byte-level pre-tokenization, 'Ġ' word starts."""
    backend = Tokenizer(models.BPE(vocab, _known_merges(vocab, merges)))
    if lower:
        backend.normalizer = normalizers.Lowercase()
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    return backend


def load_bpe(
    vocab_path: Path, merges_path: Path, *, lowercase: bool | None = None, name: str | None = None
) -> BiotokTokenizer:
    """Load a BPE pair: GPT-2 byte-level ('Ġ') or FlauBERT/XLM end-of-word ('</w>')."""
    vocab, merges = read_bpe_files(vocab_path, merges_path)
    n_eow = sum(1 for p in vocab if p.endswith("</w>"))
    n_g = sum(1 for p in vocab if p.startswith("Ġ"))
    specials = read_special_tokens(vocab_path.parent)
    if n_eow >= n_g and n_eow > 0:
        lower = lowercase
        if lower is None:
            cfg = read_json_config(vocab_path.parent)
            cfg_lower = cfg.get("do_lower_case", cfg.get("do_lowercase"))
            lower = bool(cfg_lower) if cfg_lower is not None else vocab_is_lowercase(vocab)
        backend, marker = _end_of_word(vocab, merges, lower), "</w>"
    elif n_g > 0:
        lower = bool(lowercase)
        backend, marker = _byte_level(vocab, merges, lower), "Ġ"
    else:
        raise TokenizerLoadError(
            f"{vocab_path}: neither '</w>' end-of-word pieces nor 'Ġ' byte-level pieces found; "
            "unknown BPE convention"
        )
    present = [t for t in {*specials.values(), *(p for p in vocab if SPECIAL_RE.match(p))} if t in vocab]
    backend.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in sorted(present, key=vocab.get)])
    return BiotokTokenizer(
        backend, name=name or vocab_path.parent.name, source=f"{vocab_path} + {merges_path.name}",
        specials=specials, marker=marker, lowercase=lower,
    )
