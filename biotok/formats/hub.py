"""Short aliases for the tokenizers a biomedical NLP user compares, resolved locally or on the Hub.

The only network code in biotok. An alias resolves, in this order, to
1. ``<tokenizers_dir>/<subdir>``, the folder from ``--tokenizers-dir`` or else
   :func:`biotok.datadir.tokenizers_dir` (``$BIOTOK_SHARED_DATA/tokenizers``);
2. the Hugging Face cache (files already downloaded, no network);
3. a download of the tokenizer files only (``hf_hub_download``, cached for next time).
When none works, :class:`~biotok.errors.TokenizerLoadError` says which alias, which Hub id and
how to point at a local copy, in one line.
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from biotok import datadir
from biotok.errors import TokenizerLoadError

ENV_DIR = datadir.TOKENIZERS_ENV  # the older variable, still read (datadir.ENV is the main one)


@dataclass(frozen=True)
class Alias:
    """A registry entry: the Hub repository and the local sub-directory names it may have."""

    name: str
    repo_id: str
    subdirs: tuple[str, ...]
    description: str


# Hub ids checked against the Hub pages on 2026-11-23 (see docs/compare.md).
REGISTRY: dict[str, Alias] = {
    a.name: a
    for a in (
        Alias("alibert", "quinten-datalab/AliBERT-7GB", ("AliBERT-7GB", "alibert-7gb", "alibert"),
              "AliBERT (French biomedical, regularized Unigram, 2023)"),
        Alias("camembert", "almanach/camembert-base", ("camembert-base", "camembert"),
              "CamemBERT base (French, SentencePiece BPE 32k, 2019)"),
        Alias("camembert-bio", "almanach/camembert-bio-base", ("camembert-bio-base", "camembert-bio"),
              "CamemBERT-bio (French biomedical continual pretraining, CamemBERT vocab)"),
        Alias("camemberta", "almanach/camemberta-base", ("camemberta-base", "camemberta"),
              "CamemBERTa (French DeBERTa-v3, SentencePiece Unigram 32k)"),
        Alias("camembertv2", "almanach/camembertv2-base", ("camembertv2-base", "camembertv2"),
              "CamemBERTv2 (French, WordPiece 32k, 2024)"),
        Alias("drbert", "Dr-BERT/DrBERT-7GB", ("DrBERT-7GB", "drbert-7gb", "drbert"),
              "DrBERT 7GB (French biomedical, NACHOS, SentencePiece BPE)"),
        Alias("flaubert", "flaubert/flaubert_base_uncased", ("flaubert-base-uncased", "flaubert_base_uncased", "flaubert"),
              "FlauBERT base uncased (French, BPE with </w>)"),
        Alias("barthez", "moussaKam/barthez", ("barthez",),
              "BARThez (French BART, SentencePiece BPE 50k)"),
        Alias("bert", "google-bert/bert-base-uncased", ("bert-base-uncased", "bert"),
              "BERT base uncased (English, WordPiece 30k)"),
        Alias("bert-cased", "google-bert/bert-base-cased", ("bert-base-cased", "bert-cased"),
              "BERT base cased (English, WordPiece 29k; BioBERT reuses it)"),
        Alias("scibert", "allenai/scibert_scivocab_uncased", ("scibert-scivocab-uncased", "scibert_scivocab_uncased", "scibert"),
              "SciBERT scivocab uncased (English scientific, WordPiece 31k)"),
        Alias("pubmedbert", "microsoft/BiomedNLP-BiomedBERT-base-uncased-abstract",
              ("BiomedNLP-BiomedBERT-base-uncased-abstract", "pubmedbert-base-uncased-abstract", "pubmedbert"),
              "PubMedBERT / BiomedBERT abstracts (English biomedical, WordPiece 30k)"),
        Alias("biobert", "dmis-lab/biobert-v1.1", ("biobert-v1.1", "biobert"),
              "BioBERT v1.1 (English biomedical, BERT-base cased vocab)"),
    )
}

# Tokenizer file sets, in order of preference (a complete tokenizer.json first).
FILE_SETS: tuple[tuple[str, ...], ...] = (
    ("tokenizer.json",),
    ("sentencepiece.bpe.model",),
    ("spm.model",),
    ("spiece.model",),
    ("tokenizer.model",),
    ("vocab.json", "merges.txt"),
    ("vocab.txt",),
)
CONFIG_FILES = ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")


def known_aliases() -> list[str]:
    """The alias names, sorted (for error messages and help)."""
    return sorted(REGISTRY)


def local_copy(alias: Alias, base: Path | None) -> Path | None:
    """The alias's sub-directory of ``base`` holding a tokenizer file set, if there is one."""
    if base is None or not base.is_dir():
        return None
    names = [*alias.subdirs, alias.repo_id.split("/")[-1], alias.repo_id.replace("/", "--")]
    for name in names:
        d = base / name
        if d.is_dir() and any(all(_exists(d / f) for f in fs) for fs in FILE_SETS):
            return d
    return None


def _exists(p: Path) -> bool:
    return p.is_file() or p.with_name(p.name + ".gz").is_file()


def resolve(
    name: str,
    *,
    tokenizers_dir: str | os.PathLike[str] | None = None,
    repo_id: str | None = None,
) -> Path:
    """A local directory holding the tokenizer files of alias ``name`` (or of Hub ``repo_id``)."""
    if repo_id is None:
        alias = REGISTRY.get(name.lower())
        if alias is None:
            raise TokenizerLoadError(
                f"unknown tokenizer {name!r}: not a file, a directory nor a known alias "
                f"({', '.join(known_aliases())})"
            )
    else:
        alias = Alias(name, repo_id, (repo_id.split("/")[-1],), repo_id)
    base = datadir.tokenizers_dir(tokenizers_dir)
    found = local_copy(alias, base)
    if found is not None:
        return found
    cached = _from_cache(alias.repo_id)
    if cached is not None:
        return cached
    return _download(alias, base)


def _hint(alias: Alias, base: Path | None) -> str:
    where = f"{base}/{alias.subdirs[0]}" if base else f"DIR/{alias.subdirs[0]}"
    return (
        f"put its tokenizer files in {where} and pass --tokenizers-dir (or set {datadir.ENV} to "
        f"the folder holding tokenizers/, or {ENV_DIR}), or pass the path of a local copy instead of the alias"
    )


def _from_cache(repo_id: str) -> Path | None:
    """The cached snapshot directory holding a complete file set of ``repo_id``, without network."""
    # lazy: huggingface_hub's client (requests, 100+ ms) only when a Hub alias is resolved
    from huggingface_hub import try_to_load_from_cache

    for fs in FILE_SETS:
        paths = [try_to_load_from_cache(repo_id, f) for f in fs]
        if all(isinstance(p, str) for p in paths):
            return Path(paths[0]).parent  # type: ignore[arg-type]
    return None


def hub_reachable(timeout: float = 3.0) -> bool:
    """True when the Hub host name resolves (a quick check, so offline runs fail at once)."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return False
    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    result: list[bool] = []

    def probe() -> None:
        try:
            socket.getaddrinfo(host, 443)
            result.append(True)
        except OSError:
            result.append(False)

    t = threading.Thread(target=probe, daemon=True)
    t.start()
    t.join(timeout)
    return bool(result and result[0])


def _download(alias: Alias, base: Path | None) -> Path:
    """Download the first complete tokenizer file set of the repository (plus its configs)."""
    if not hub_reachable():
        raise TokenizerLoadError(
            f"alias {alias.name!r} is the Hub tokenizer {alias.repo_id}, which is not in the local "
            f"cache and the Hub is unreachable (offline): {_hint(alias, base)}"
        )
    # lazy: huggingface_hub's client (requests, 100+ ms) only when a tokenizer is downloaded
    from huggingface_hub import HfApi, hf_hub_download

    from biotok.hubclient import endpoint, timed_out, with_deadline, within  # lazy: as above

    timeout = with_deadline()  # every call bounded (biotok.hub.hub_timeout)
    try:
        files = set(within(timeout, HfApi(endpoint=endpoint()).list_repo_files, alias.repo_id))
        chosen = next((fs for fs in FILE_SETS if all(f in files for f in fs)), None)
        if chosen is None:
            raise TokenizerLoadError(
                f"Hub repository {alias.repo_id} (alias {alias.name!r}) has no tokenizer file "
                f"({', '.join(f for fs in FILE_SETS for f in fs)})"
            )
        paths = [hf_hub_download(alias.repo_id, f, endpoint=endpoint()) for f in chosen]
        for f in CONFIG_FILES:
            if f in files:
                hf_hub_download(alias.repo_id, f, endpoint=endpoint())
    except TokenizerLoadError:
        raise
    except Exception as e:  # network, auth (gated repo), missing repo: one line for the user
        first = (str(e).splitlines() or [type(e).__name__])[0]
        if timed_out(e):
            first = f"the Hub at {endpoint()} did not answer within {timeout:g} s ({type(e).__name__})"
        raise TokenizerLoadError(
            f"cannot download alias {alias.name!r} from the Hub ({alias.repo_id}): {first}; "
            f"{_hint(alias, base)}"
        ) from e
    return Path(paths[0]).parent
