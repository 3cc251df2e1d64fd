"""Hugging Face ``tokenizers`` files: a tokenizer directory or a bare ``tokenizer.json[.gz]``.

Also the HF config readers every other format uses (special tokens by role from
``tokenizer_config.json`` / ``special_tokens_map.json``).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from tokenizers import Tokenizer

from biotok.errors import TokenizerLoadError
from biotok.io import open_compressed
from biotok.tokenizer import ROLES, BiotokTokenizer

PathLike = str | os.PathLike[str]
log = logging.getLogger(__name__)


# Bounds checked at the door, where every tokenizer is loaded: a vocabulary's largest id (numpy
# tables, embeddings and the Rust library allocate one row per id: an id of 2,000,000,000 asked
# for 15 GiB, or aborted the process) and a JSON file's nesting (Python's parser recurses).
MAX_TOKEN_ID = (1 << 24) - 1  # 16,777,215: 64 times the largest vocabularies in use


def parse_json(text: str, path: PathLike, what: str = "") -> object:
    """``json.loads(text)`` of tokenizer file ``path``, its failures as one TokenizerLoadError line:
    invalid JSON, or nested deeper than Python's parser recurses (no tokenizer file comes close;
    the tokenizers library itself refuses more than 128 levels)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise TokenizerLoadError(f"{path} is not valid JSON (line {e.lineno}: {e.msg})") from None
    except RecursionError:
        raise TokenizerLoadError(f"{path} is nested too deeply (thousands of levels): not a {what or 'tokenizer'} "
                                 "file") from None


def check_ids(tok: BiotokTokenizer, source: object) -> BiotokTokenizer:
    """Refuse a tokenizer whose largest id is beyond :data:`MAX_TOKEN_ID` (one line naming it)."""
    ids = tok.backend.get_vocab(with_added_tokens=True).values()
    top = max(ids, default=0)
    if top > MAX_TOKEN_ID:
        raise TokenizerLoadError(f"{source}: token id {top:,} is beyond the {MAX_TOKEN_ID + 1:,} ids a vocabulary may "
                                 f"hold here ({len(ids):,} tokens); the file is damaged or not a tokenizer")
    return tok


def transformer_folder(directory: PathLike) -> Path | None:
    """In a sentence-transformers folder (``modules.json``), the folder of its ``Transformer``
    module (``0_Transformer/`` in the older layout, the folder itself in the newer); None for any
    other folder. The one reader of modules.json (tokenizers here, models in biotok_train)."""
    d = Path(directory)
    modules = d / "modules.json"
    if not modules.is_file():
        return None
    try:
        entries = parse_json(modules.read_text(encoding="utf-8"), modules, "sentence-transformers modules.json")
    except (OSError, UnicodeDecodeError) as e:
        raise TokenizerLoadError(f"{modules} is not a readable sentence-transformers modules.json: {e}") from None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and str(entry.get("type", "")).endswith("models.Transformer"):
            sub = d / str(entry.get("path") or "")
            if sub.is_dir():
                return sub
    raise TokenizerLoadError(f"{d}: modules.json names no Transformer module folder")


def read_tokenizer_json(path: PathLike) -> Tokenizer:
    """Parse a tokenizer.json (or .json.gz) with a clear error when it is not one."""
    p = str(path)
    try:
        with open_compressed(p) as f:
            text = f.read()
    except FileNotFoundError as e:
        raise TokenizerLoadError(f"tokenizer file not found: {p}") from e
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise TokenizerLoadError(f"cannot read tokenizer file {p}: {e}") from e
    parse_json(text, p, "tokenizer.json")
    try:
        tok = Tokenizer.from_str(text)
    except Exception as e:  # the Rust parser raises a bare Exception
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise TokenizerLoadError(f"{p} is not a tokenizers tokenizer.json: {first}") from e
    # Saved padding/truncation (every sentence-transformers model has them) would pad each term
    # to 128 pieces and cut long texts: biotok measures the tokenizer, never the batch settings.
    tok.no_padding()
    tok.no_truncation()
    return tok


def read_json_config(directory: PathLike) -> dict:
    """tokenizer_config.json of ``directory`` as a dict ({} when absent)."""
    f = Path(directory) / "tokenizer_config.json"
    if not f.is_file():
        return {}
    try:
        cfg = parse_json(f.read_text(encoding="utf-8"), f)
    except UnicodeDecodeError as e:
        raise TokenizerLoadError(f"{f} is not valid JSON: {e}") from e
    return cfg if isinstance(cfg, dict) else {}


def read_special_tokens(directory: PathLike) -> dict[str, str]:
    """Special tokens by role from tokenizer_config.json / special_tokens_map.json, if present."""
    out: dict[str, str] = {}
    d = Path(directory)
    for fname in ("special_tokens_map.json", "tokenizer_config.json"):
        f = d / fname
        if not f.is_file():
            continue
        try:
            cfg = parse_json(f.read_text(encoding="utf-8"), f)
        except UnicodeDecodeError as e:
            raise TokenizerLoadError(f"{f} is not valid JSON: {e}") from e
        if not isinstance(cfg, dict):
            raise TokenizerLoadError(f"{f} is not a JSON object of special tokens")
        for role in ROLES:
            v = cfg.get(f"{role}_token")
            if isinstance(v, dict):
                v = v.get("content")
            if isinstance(v, str) and role not in out:
                out[role] = v
    return out


def normalizer_lowercases(backend: Tokenizer) -> bool:
    """True when the tokenizer's own normalizer lowercases (Lowercase, or BertNormalizer lowercase)."""
    if backend.normalizer is None:
        return False
    spec = json.loads(backend.normalizer.__getstate__())

    def walk(node) -> bool:
        if isinstance(node, dict):
            if node.get("type") == "Lowercase" or (node.get("type") == "BertNormalizer" and node.get("lowercase")):
                return True
            return any(walk(v) for v in node.get("normalizers", []))
        return False

    return walk(spec)


def _artifact_lowercase(directory: Path) -> bool | None:
    """The lowercase switch recorded in a biotok artifact's biotok.json (None: not an artifact)."""
    meta = directory / "biotok.json"
    if not meta.is_file():
        return None
    try:
        cfg = json.loads(meta.read_text(encoding="utf-8"))
        return bool(cfg["config"]["normalize"]["lowercase"])
    except (KeyError, json.JSONDecodeError, TypeError) as e:  # the tokenizer itself is still usable
        log.warning("%s has no readable lowercase setting (%s); asking the normalizer instead", meta, e)
        return None


def load_hf(path: PathLike, name: str | None = None) -> BiotokTokenizer:
    """Load a HF tokenizer directory (tokenizer.json inside) or a bare tokenizer.json[.gz].

    A saved pipeline is used as saved; ``lowercase`` comes from biotok.json or the normalizer.
    """
    p = Path(path)
    if p.is_dir():
        for candidate in ("tokenizer.json", "tokenizer.json.gz"):
            if (p / candidate).is_file():
                backend = read_tokenizer_json(p / candidate)
                lowercase = _artifact_lowercase(p)
                return BiotokTokenizer(
                    backend, name=name or p.name, source=str(p), specials=read_special_tokens(p),
                    lowercase=normalizer_lowercases(backend) if lowercase is None else lowercase,
                )
        raise TokenizerLoadError(f"{p} has no tokenizer.json")
    backend = read_tokenizer_json(p)
    stem = p.name.split(".")[0]
    return BiotokTokenizer(
        backend, name=name or (p.parent.name if stem == "tokenizer" else stem), source=str(p),
        specials=read_special_tokens(p.parent), lowercase=normalizer_lowercases(backend),
    )
