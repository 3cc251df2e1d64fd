"""``load_any``: one entry point for every tokenizer format a biomedical NLP user meets.

Formats: a biotok artifact or HF tokenizer directory, a bare ``tokenizer.json[.gz]``, a
SentencePiece ``.model`` (Unigram or BPE), a WordPiece ``vocab.txt``, a BPE ``vocab.json`` +
``merges.txt`` (FlauBERT ``</w>`` or GPT-2 ``Ġ`` byte-level), or an alias / Hub id
(:mod:`biotok.hub`). Each is rebuilt as a ``tokenizers.Tokenizer`` that segments like the
original library, wrapped in :class:`~biotok.tokenizer.BiotokTokenizer`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from biotok.errors import TokenizerLoadError
from biotok.tokenizer import BiotokTokenizer, load_hf, read_special_tokens

SPM_NAMES = ("sentencepiece.bpe.model", "spm.model", "spiece.model", "tokenizer.model")
_SPECIAL_RE = re.compile(r"^(\[[A-Za-z_]+[0-9]*\]|<[A-Za-z_/]+[0-9]*>)$")
_HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_FILE_SUFFIXES = (".json", ".gz", ".model", ".txt")


def load_any(
    name_or_path: str | os.PathLike[str],
    *,
    tokenizers_dir: str | os.PathLike[str] | None = None,
    lowercase: bool | None = None,
    name: str | None = None,
) -> BiotokTokenizer:
    """Load a tokenizer from a path (any supported format) or an alias / Hub id.

    ``lowercase`` overrides what a vocab.txt / vocab.json implies (None: decide from the vocab).
    """
    raw = str(name_or_path)
    p = Path(raw).expanduser()
    if p.exists():
        return _load_path(p, lowercase=lowercase, name=name)
    from biotok import hub

    if raw.lower() in hub.REGISTRY:
        d = hub.resolve(raw, tokenizers_dir=tokenizers_dir)
        return _load_path(d, lowercase=lowercase, name=name or raw.lower(), source=f"{raw} ({d})")
    looks_like_file = raw.lower().endswith(_FILE_SUFFIXES) or raw.startswith((".", "/", "~"))
    if looks_like_file or (os.sep in raw and not _HUB_ID_RE.match(raw)):
        raise TokenizerLoadError(f"tokenizer file or directory not found: {raw}")
    if _HUB_ID_RE.match(raw):
        d = hub.resolve(raw, tokenizers_dir=tokenizers_dir, repo_id=raw)
        return _load_path(d, lowercase=lowercase, name=name or raw, source=f"{raw} ({d})")
    raise TokenizerLoadError(
        f"unknown tokenizer {raw!r}: not a file, a directory nor a known alias "
        f"({', '.join(hub.known_aliases())})"
    )


# --- dispatch ---------------------------------------------------------------------------------
def _load_path(
    p: Path, *, lowercase: bool | None, name: str | None, source: str | None = None
) -> BiotokTokenizer:
    if p.is_dir():
        tok = _load_dir(p, lowercase=lowercase, name=name)
    else:
        tok = _load_file(p, lowercase=lowercase, name=name)
    if source:
        tok.source = source
    return tok


def normalizer_lowercases(backend: Tokenizer) -> bool:
    """True when the tokenizer's own normalizer lowercases (Lowercase, or BertNormalizer lowercase)."""
    if backend.normalizer is None:
        return False
    try:
        spec = json.loads(backend.normalizer.__getstate__())
    except (ValueError, TypeError, AttributeError):  # pragma: no cover - exotic normalizer
        return False

    def walk(node) -> bool:
        if isinstance(node, dict):
            if node.get("type") == "Lowercase" or (node.get("type") == "BertNormalizer" and node.get("lowercase")):
                return True
            return any(walk(v) for v in node.get("normalizers", []))
        return False

    return walk(spec)


def _hf(p: Path, *, lowercase: bool | None, name: str | None) -> BiotokTokenizer:
    """A saved pipeline is used as saved: ``lowercase`` (meant for vocab files) is not applied."""
    tok = load_hf(p, name=name)
    if tok.lowercase is None:
        tok.lowercase = normalizer_lowercases(tok.backend)
    return tok


def _load_dir(d: Path, *, lowercase: bool | None, name: str | None) -> BiotokTokenizer:
    if (d / "tokenizer.json").is_file() or (d / "tokenizer.json.gz").is_file():
        # the complete description wins over partial files (e.g. camembertv2's vocab.txt
        # holds "\n" as a token and cannot be read line by line)
        return _hf(d, lowercase=lowercase, name=name)
    found: list[str] = []
    spm = [d / n for n in SPM_NAMES if (d / n).is_file()]
    if spm:
        found.append(spm[0].name)
    if (d / "vocab.json").is_file() and (d / "merges.txt").is_file():
        found.append("vocab.json + merges.txt")
    if (d / "vocab.txt").is_file():
        found.append("vocab.txt")
    if not found:
        raise TokenizerLoadError(
            f"{d} holds no tokenizer: expected tokenizer.json, a SentencePiece .model, "
            "vocab.json + merges.txt, or vocab.txt"
        )
    if len(found) > 1 or len(spm) > 1:
        listed = ", ".join(found + [s.name for s in spm[1:]])
        raise TokenizerLoadError(
            f"{d} mixes tokenizer formats ({listed}): pass the file you mean instead of the directory"
        )
    nm = name or d.name
    if spm:
        return load_spm(spm[0], name=nm)
    if found[0].startswith("vocab.json"):
        return load_bpe(d / "vocab.json", d / "merges.txt", lowercase=lowercase, name=nm)
    return load_wordpiece(d / "vocab.txt", lowercase=lowercase, name=nm)


def _load_file(f: Path, *, lowercase: bool | None, name: str | None) -> BiotokTokenizer:
    fname = f.name.lower()
    generic = fname.split(".")[0] in ("tokenizer", "vocab", "merges", "spm", "sentencepiece", "spiece")
    stem_name = name or (f.parent.name if generic else f.name.split(".")[0])
    if fname.endswith(".model"):
        return load_spm(f, name=stem_name)
    if fname.endswith((".json", ".json.gz")):
        if fname in ("vocab.json", "vocab.json.gz") or (not fname.startswith("tokenizer") and _is_flat_vocab(f)):
            merges = f.with_name("merges.txt")
            if not merges.is_file():
                raise TokenizerLoadError(f"{f} is a BPE vocabulary but {merges} is missing beside it")
            return load_bpe(f, merges, lowercase=lowercase, name=stem_name)
        return _hf(f, lowercase=lowercase, name=stem_name)
    if fname == "merges.txt":
        vocab = f.with_name("vocab.json")
        if not vocab.is_file():
            raise TokenizerLoadError(f"{f} is a BPE merges file but {vocab} is missing beside it")
        return load_bpe(vocab, f, lowercase=lowercase, name=stem_name)
    if fname.endswith(".txt"):
        return load_wordpiece(f, lowercase=lowercase, name=stem_name)
    raise TokenizerLoadError(
        f"{f}: unknown tokenizer format (expected tokenizer.json[.gz], *.model, vocab.txt, "
        "vocab.json + merges.txt, or a directory)"
    )


def _is_flat_vocab(f: Path) -> bool:
    """True when a .json file is a flat {piece: id} map (a BPE vocab.json), not a tokenizer.json."""
    if f.name.endswith(".gz") or f.stat().st_size > 64 << 20:
        return False
    try:
        obj = json.loads(f.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False  # load_hf gives the precise parse error
    return isinstance(obj, dict) and bool(obj) and all(isinstance(v, int) for v in list(obj.values())[:100])


# --- WordPiece vocab.txt ------------------------------------------------------------------------
def read_vocab_txt(path: Path) -> dict[str, int]:
    """Read a BERT vocab.txt (one piece per line, id = line number) with clear errors."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise TokenizerLoadError(f"cannot read {path}: {e.strerror}") from None
    if b"\x00" in data:
        raise TokenizerLoadError(f"{path} is binary, not a vocab.txt")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TokenizerLoadError(f"{path} is not UTF-8 (byte {e.start})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    vocab: dict[str, int] = {}
    for i, line in enumerate(lines):
        token = line.rstrip("\r")  # like BERT's load_vocab: only the line end is removed
        if token in vocab:
            raise TokenizerLoadError(
                f"{path}:{i + 1}: duplicate token {token!r} (first on line {vocab[token] + 1}); if the "
                "vocab holds whitespace tokens such as '\\n', load its tokenizer.json instead"
            )
        vocab[token] = i
    if not vocab:
        raise TokenizerLoadError(f"{path} is empty")
    return vocab


def vocab_is_lowercase(vocab: dict[str, int] | list[str], tolerance: float = 0.01) -> bool:
    """True for an uncased vocabulary: under 1% of ordinary pieces hold an uppercase letter.

    (Uncased vocabs keep a few symbols such as 'ℝ' or Greek capitals; cased ones have ~30%.)
    """
    ordinary = [p for p in vocab if not _SPECIAL_RE.match(p)]
    upper = sum(1 for p in ordinary if any(c.isupper() for c in p))
    return upper <= tolerance * max(1, len(ordinary))


def _unk_of(vocab: dict[str, int], path: Path) -> str:
    for cand in ("[UNK]", "<unk>", "<UNK>", "[unk]"):
        if cand in vocab:
            return cand
    raise TokenizerLoadError(f"{path} has no unknown token ([UNK] or <unk>): not a WordPiece vocab.txt")


def wordpiece_from_vocab(vocab: dict[str, int], *, lowercase: bool, unk: str = "[UNK]") -> Tokenizer:
    """The BERT tokenizer of a vocab: BertNormalizer (lowercase + strip accents when uncased),
    BertPreTokenizer, WordPiece with '##', [CLS] $A [SEP] framing — as BertTokenizerFast builds it."""
    tok = Tokenizer(models.WordPiece(vocab, unk_token=unk, max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=lowercase
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    specials = [t for t in ("[PAD]", unk, "[CLS]", "[SEP]", "[MASK]") if t in vocab]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    if "[CLS]" in vocab and "[SEP]" in vocab:
        tok.post_processor = processors.BertProcessing(("[SEP]", vocab["[SEP]"]), ("[CLS]", vocab["[CLS]"]))
    return tok


def load_wordpiece(path: Path, *, lowercase: bool | None = None, name: str | None = None) -> BiotokTokenizer:
    """Load a WordPiece vocab.txt; lowercasing decided by the vocab unless ``lowercase`` is given."""
    vocab = read_vocab_txt(path)
    unk = _unk_of(vocab, path)
    lower = vocab_is_lowercase(vocab) if lowercase is None else lowercase
    backend = wordpiece_from_vocab(vocab, lowercase=lower, unk=unk)
    specials = read_special_tokens(path.parent)
    return BiotokTokenizer(
        backend, name=name or path.parent.name, source=str(path), specials=specials, marker="##", lowercase=lower
    )


# --- BPE vocab.json + merges.txt -------------------------------------------------------------------
def read_bpe_files(vocab_path: Path, merges_path: Path) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Parse a BPE vocab.json and merges.txt (a '#version' header and count columns are allowed)."""
    try:
        vocab = json.loads(vocab_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise TokenizerLoadError(f"{vocab_path} is not valid JSON (line {e.lineno}: {e.msg})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TokenizerLoadError(f"cannot read {vocab_path}: {e}") from None
    if not isinstance(vocab, dict) or not vocab or not all(
        isinstance(k, str) and isinstance(v, int) for k, v in vocab.items()
    ):
        raise TokenizerLoadError(f"{vocab_path} is not a BPE vocabulary (expected a JSON object piece -> id)")
    merges: list[tuple[str, str]] = []
    try:
        text = merges_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TokenizerLoadError(f"cannot read {merges_path}: {e}") from None
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


def _read_json_config(directory: Path) -> dict:
    f = directory / "tokenizer_config.json"
    if not f.is_file():
        return {}
    try:
        cfg = json.loads(f.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TokenizerLoadError(f"{f} is not valid JSON: {e}") from None
    return cfg if isinstance(cfg, dict) else {}


def load_bpe(
    vocab_path: Path, merges_path: Path, *, lowercase: bool | None = None, name: str | None = None
) -> BiotokTokenizer:
    """Load a BPE pair: GPT-2 byte-level ('Ġ') or FlauBERT/XLM end-of-word ('</w>')."""
    vocab, merges = read_bpe_files(vocab_path, merges_path)
    n_eow = sum(1 for p in vocab if p.endswith("</w>"))
    n_g = sum(1 for p in vocab if p.startswith("Ġ"))
    cfg = _read_json_config(vocab_path.parent)
    specials = read_special_tokens(vocab_path.parent)
    if n_eow >= n_g and n_eow > 0:
        lower = lowercase
        if lower is None:
            cfg_lower = cfg.get("do_lower_case", cfg.get("do_lowercase"))
            lower = bool(cfg_lower) if cfg_lower is not None else vocab_is_lowercase(vocab)
        unk = next((u for u in ("<unk>", "[UNK]") if u in vocab), None)
        # XLM-style merges.txt may hold a few merges whose result was cut from vocab.json
        # (FlauBERT: 4 of 50,000); the original emits <unk> there, tokenizers cannot: drop them.
        merges = [(a, b) for a, b in merges if a + b in vocab and a in vocab and b in vocab]
        backend = Tokenizer(models.BPE(vocab, merges, unk_token=unk, end_of_word_suffix="</w>"))
        steps = [normalizers.NFC()] + ([normalizers.Lowercase()] if lower else [])
        backend.normalizer = normalizers.Sequence(steps)
        # XLM/FlauBERT use the Moses tokenizer: whitespace words, punctuation split off
        backend.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation("isolated")]
        )
        backend.decoder = decoders.BPEDecoder(suffix="</w>")
        marker = "</w>"
    elif n_g > 0:
        lower = bool(lowercase)
        merges = [(a, b) for a, b in merges if a + b in vocab and a in vocab and b in vocab]
        backend = Tokenizer(models.BPE(vocab, merges))
        if lower:
            backend.normalizer = normalizers.Lowercase()
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        backend.decoder = decoders.ByteLevel()
        marker = "Ġ"
    else:
        raise TokenizerLoadError(
            f"{vocab_path}: neither '</w>' end-of-word pieces nor 'Ġ' byte-level pieces found; "
            "unknown BPE convention"
        )
    present = [t for t in {*specials.values(), *(p for p in vocab if _SPECIAL_RE.match(p))} if t in vocab]
    backend.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in sorted(present, key=vocab.get)])
    return BiotokTokenizer(
        backend, name=name or vocab_path.parent.name, source=f"{vocab_path} + {merges_path.name}",
        specials=specials, marker=marker, lowercase=lower,
    )


# --- SentencePiece .model -------------------------------------------------------------------
def load_spm(path: Path, *, name: str | None = None) -> BiotokTokenizer:
    """Load a SentencePiece model through biotok.spm_convert (its own normalization kept)."""
    from biotok.spm_convert import spm_to_tokenizer

    backend = spm_to_tokenizer(path, normalizer="spm")
    specials = read_special_tokens(path.parent)
    return BiotokTokenizer(backend, name=name or path.parent.name, source=str(path), specials=specials,
                           marker="▁", lowercase=normalizer_lowercases(backend))
