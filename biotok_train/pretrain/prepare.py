"""Tokenize a corpus once into memory-mapped, packed pretraining data (``biotok-train prepare``).

Layout of a data directory::

    meta.json          format, tokenizer fingerprint, vocab size, special ids, dtype, counts
    tokens.bin         every token id of the corpus, no special tokens (uint16, or uint32 > 65535)
    word_starts.bin    uint8 flag per token: 1 on the first piece of a pre-tokenized word
    segments.npy       int64 token offset where each segment (corpus line) starts, + the end
    documents.npy      int64 segment index where each document starts, + the end
    sequences.npy      int64 (N, 3): start, split, end token offsets of each training sequence
    tokenizer/         the tokenizer, untouched (tokenizer.json + special_tokens_map.json)

Documents: each corpus line is a *segment*; the consecutive lines of one input file form one
*document*. A training sequence is a window of exactly ``seq_len - 3`` tokens of one document
(only a document's last window can be shorter), split into segments A and B at the line
boundary nearest its middle (else at the nearest word start), so that it becomes
``[CLS] A [SEP] B [SEP]`` — and SOP can swap A and B. Word starts come from the tokenizer's own
``word_ids`` (its pre-tokenization), so whole-word masking works for ▁, ##, Ġ and </w> alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
import numpy as np

from biotok.corpus import batches, corpus_names, iter_lines, resolve, total_bytes
from biotok.errors import ConfigError
from biotok.output import atomic_directory, check_writable
from biotok.formats import load, load_hf
from biotok.tokenizer import BiotokTokenizer
from biotok_train.config import MAX_SEQ_LEN, PrepareConfig
from biotok_train.errors import DataError, TokenizerMismatchError
from biotok_train.pretrain.encode_pool import CHUNK_CHARS, CHUNK_LINES, encode_chunks, usable_workers

FORMAT = "biotok-pretrain-data/1"
SPECIALS_OVERHEAD = 3  # [CLS] A [SEP] B [SEP]
_FILES = ("meta.json", "tokens.bin", "word_starts.bin", "segments.npy", "documents.npy", "sequences.npy")
MARKER = "meta.json"  # the file that makes a folder prepared data (--force replaces only those)


@dataclass(frozen=True)
class PreparedData:
    """A prepared data directory and what it holds."""

    path: Path
    num_tokens: int
    num_sequences: int
    seq_len: int
    fingerprint: str
    vocab_size: int
    dtype: str
    num_segments: int = 0
    num_documents: int = 0


def token_dtype(vocab_size: int) -> np.dtype:
    """uint16 when every id fits, else uint32."""
    return np.dtype(np.uint16) if vocab_size <= 65535 else np.dtype(np.uint32)


def pack_sequences(
    segments: np.ndarray, documents: np.ndarray, word_starts: np.ndarray, seq_len: int
) -> np.ndarray:
    """Cut each document into windows of ``seq_len - 3`` tokens with an A/B split point.

    ``segments``: token offsets of segment starts (+ end); ``documents``: segment indices of
    document starts (+ end). Returns int64 rows ``(start, split, end)``. Vectorized: on one core
    it would otherwise be the slowest part of a prepare on many cores.
    """
    content = seq_len - SPECIALS_OVERHEAD
    segments, documents = np.asarray(segments, dtype=np.int64), np.asarray(documents, dtype=np.int64)
    ds, de = segments[documents[:-1]], segments[documents[1:]]
    counts = np.maximum(-(-(de - ds) // content), 0)  # windows of each document
    doc = np.repeat(np.arange(len(ds)), counts)
    k = np.arange(len(doc)) - np.repeat(np.cumsum(counts) - counts, counts)  # the window's place in its document
    start = ds[doc] + k * content
    end = np.minimum(start + content, de[doc])
    return np.stack([start, _split_points(start, end, segments, word_starts), end], axis=1).astype(np.int64)


def _split_points(start: np.ndarray, end: np.ndarray, segments: np.ndarray, word_starts: np.ndarray) -> np.ndarray:
    """For each window [start, end): the line boundary nearest its middle (the first of two as near),
    else the nearest word start, else the middle; a window under 2 tokens splits at its end.

    A segment start strictly inside a window of a document is one of that document's interior line
    boundaries; the nearest to the middle is the last one at or before it or the first one after it.
    """
    mid = (start + end) / 2
    i = np.searchsorted(segments, mid, side="right")
    lo = segments[np.maximum(i - 1, 0)]
    hi = segments[np.minimum(i, len(segments) - 1)]
    lo_ok = (i > 0) & (lo > start)  # and lo <= mid < end
    hi_ok = (i < len(segments)) & (hi < end)  # and hi > mid >= start
    take_lo = lo_ok & (~hi_ok | (mid - lo <= hi - mid))
    long = end - start >= 2
    split = np.where(long & take_lo, lo, np.where(long & hi_ok & ~take_lo, hi, end))
    for r in np.flatnonzero(long & ~lo_ok & ~hi_ok):  # no line boundary inside: a word start
        split[r] = _word_split(int(start[r]), int(end[r]), word_starts)
    return split


def _word_split(start: int, end: int, word_starts: np.ndarray) -> int:
    """The word start nearest the middle of [start, end) (not ``start`` itself), else the middle."""
    mid = (start + end) / 2
    starts = np.flatnonzero(word_starts[start + 1 : end]) + start + 1
    if len(starts):
        return int(starts[np.argmin(np.abs(starts - mid))])
    return int(mid)


def prepare(
    corpus: list[str],
    tokenizer: str | Path,
    config: PrepareConfig,
    out: str | Path,
    *,
    force: bool = False,
    progress: bool = True,
    workers: int | None = None,
) -> PreparedData:
    """Tokenize ``corpus`` with ``tokenizer`` (streaming, batched) into a packed data directory
    of ``config.seq_len``-token sequences.

    ``workers`` (None: ``config.workers``): tokenizing processes, 0 every core this process may
    use (one for a corpus under 4 MB), 1 this process alone; the files are the same bytes
    whatever the number (:mod:`biotok_train.pretrain.encode_pool`).

    ``config.sample_alpha``: subword regularization (:mod:`biotok.sampling`): each of
    ``config.copies`` copies of the corpus is segmented differently, sampled with the Unigram
    model (Kudo 2018; ``alpha`` the smoothing exponent) or with BPE-dropout (Provilkov et al.
    2020; ``alpha`` the dropout probability), seeded by ``config.seed``; word starts stay exact
    in every copy. Each copy of a file is a document of its own. The directory is built in a
    temporary sibling and renamed onto ``out`` when complete.
    """
    seq_len, field_name = config.seq_len, config.field_name
    out = Path(out)
    # the corpus and a tokenizer given as a path (a model folder) are inputs: never written into
    inputs = [*corpus, *([tokenizer] if Path(tokenizer).exists() else [])]
    check_writable(out, force, inputs=inputs, marker=MARKER)  # fail before tokenizing
    tok = load(tokenizer)
    _check_specials(tok)
    fingerprint = tok.fingerprint  # before any change to the backend
    pristine = tok.backend.to_str()
    files = resolve(corpus)  # raises CorpusError early for missing inputs
    tok.backend.no_truncation()
    tok.backend.no_padding()
    samplers = _samplers(tok, config)
    size = total_bytes(files)
    n = usable_workers(config.workers if workers is None else workers, size * config.copies if size is not None else None)
    with atomic_directory(out, force, inputs=inputs, marker=MARKER) as tmp:
        sampling = (config.sample_alpha, tuple(x.seed for x in samplers)) if samplers is not None else None
        segments, documents = _tokenize(tok, files, field_name, tmp, progress, sampling, n)
        word_starts = np.memmap(tmp / "word_starts.bin", dtype=np.uint8, mode="r")
        sequences = pack_sequences(segments, documents, word_starts, seq_len)
        del word_starts
        np.save(tmp / "segments.npy", segments)
        np.save(tmp / "documents.npy", documents)
        np.save(tmp / "sequences.npy", sequences)
        _save_tokenizer(tok, pristine, tmp / "tokenizer")
        meta = _meta(tok, str(tokenizer), fingerprint, seq_len, segments, documents, sequences, files, field_name)
        if samplers is not None:
            meta["sampling"] = {"algorithm": samplers[0].algorithm, "alpha": config.sample_alpha,
                                "copies": config.copies, "seed": config.seed,
                                "documents": "each copy of each input file is one document"}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return _from_meta(out, meta)


def _samplers(tok: BiotokTokenizer, config: PrepareConfig) -> list | None:
    """Subword regularization's samplers, one seed per copy (within a copy each line's sample is a
    function of its index); None without ``config.sample_alpha``."""
    if config.sample_alpha is None:
        return None
    from biotok.sampling import Sampler  # lazy: only for sampling

    return [Sampler(tok.backend, config.sample_alpha, seed=config.seed * 1000 + k) for k in range(config.copies)]


def _tokenize(
    tok: BiotokTokenizer, files, field_name: str | None, out: Path, progress: bool,
    sampling: tuple[float, tuple[int, ...]] | None = None, workers: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Write tokens.bin and word_starts.bin; return the segment and document offsets (+ the end).

    Each input file is one document (each copy of it, with ``sampling``: one sampled
    segmentation of the corpus per seed: alpha and one seed per copy), each
    non-empty encoded line one segment. The lines
    are read here, in order, and encoded in chunks on ``workers`` processes; the chunks come back
    in order, so the files do not depend on ``workers``.
    """
    copies = len(sampling[1]) if sampling else 1

    def chunks():
        for copy in range(copies):
            index = 0  # the line's position in the corpus: its samples depend on it, not on order
            for fi, cf in enumerate(files):
                for batch in batches(iter_lines([cf.path], field_name), CHUNK_LINES, CHUNK_CHARS):
                    yield (copy, fi), batch, copy, index
                    index += len(batch)

    seg_starts: list[np.ndarray] = []
    n_segments = 0
    doc_starts: list[int] = []
    n_tokens = 0
    document = None
    bar = _bar(files, progress, copies=copies)
    try:
        with open(out / "tokens.bin", "wb") as ftok, open(out / "word_starts.bin", "wb") as fws:
            for tag, enc in encode_chunks(chunks(), tok.backend, token_dtype(tok.vocab_size), workers, sampling):
                if tag != document:  # a new document: a file (a copy of it) with at least one line
                    if document is not None and doc_starts[-1] == n_segments:  # one without tokens: none
                        doc_starts.pop()
                    document = tag
                    doc_starts.append(n_segments)
                lengths = np.frombuffer(enc.lengths, dtype=np.int64)
                kept = lengths[lengths > 0]  # a line without tokens is no segment
                seg_starts.append(n_tokens + np.concatenate(([0], np.cumsum(kept[:-1]))) if len(kept) else kept)
                n_segments += len(kept)
                ftok.write(enc.ids)
                fws.write(enc.starts)
                n_tokens += len(enc.starts)
                if bar is not None:
                    bar.update(enc.nbytes)
                    bar.set_postfix(tokens=n_tokens, refresh=False)
            if doc_starts and doc_starts[-1] == n_segments:
                doc_starts.pop()
    finally:
        if bar is not None:
            bar.close()
    if n_tokens == 0:
        raise DataError(f"the corpus {corpus_names(files)} produced no tokens (empty, or blank lines only)")
    segments = np.concatenate([*seg_starts, [n_tokens]]).astype(np.int64)
    return segments, np.asarray(doc_starts + [n_segments], dtype=np.int64)


def _meta(tok: BiotokTokenizer, source: str, fingerprint: str, seq_len: int, segments: np.ndarray,
          documents: np.ndarray, sequences: np.ndarray, files, field_name: str | None) -> dict:
    """meta.json: the format, the tokenizer (fingerprint, special ids) and the counts."""
    lengths = sequences[:, 2] - sequences[:, 0]
    return {
        "format": FORMAT,
        "tokenizer": {
            "name": tok.name,
            "source": source,
            "fingerprint": fingerprint,
            "vocab_size": tok.vocab_size,
            "family": tok.family,
            "marker": tok.marker,
            "special_ids": {r: tok.special_id(r) for r in ("pad", "unk", "cls", "sep", "mask")},
            "all_special_ids": sorted(tok.special_ids),
        },
        "seq_len": seq_len,
        "dtype": token_dtype(tok.vocab_size).name,
        "num_tokens": int(segments[-1]),
        "num_segments": len(segments) - 1,
        "num_documents": len(documents) - 1,
        "num_sequences": int(len(sequences)),
        "padding_fraction": float(1 - lengths.sum() / (len(sequences) * (seq_len - SPECIALS_OVERHEAD))),
        "corpus": [cf.name for cf in files],
        "field": field_name,
        "documents": "each input file is one document; each non-blank line is one segment",
    }


def _check_specials(tok: BiotokTokenizer) -> None:
    missing = [r for r in ("cls", "sep", "mask", "pad") if tok.special_id(r) is None]
    if missing:
        raise ConfigError(
            f"tokenizer {tok.name} has no {'/'.join(missing)} token: pretraining needs "
            "[CLS]/<s>, [SEP]/</s>, [MASK]/<mask> and [PAD]/<pad>"
        )


def _save_tokenizer(tok: BiotokTokenizer, pristine: str, directory: Path) -> None:
    """The tokenizer exactly as given (same fingerprint) plus its special tokens by role, and the
    vocabulary's provenance (its biotok.json, for model cards) when it has one."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tokenizer.json").write_text(pristine, encoding="utf-8")
    (directory / "special_tokens_map.json").write_text(
        json.dumps({f"{r}_token": t for r, t in tok.specials.items()}, indent=2, ensure_ascii=False),
        encoding="utf-8",
    )
    provenance = Path(tok.source) / "biotok.json" if tok.source else None
    if provenance is not None and provenance.is_file():
        (directory / "biotok.json").write_bytes(provenance.read_bytes())


def _bar(files, progress: bool, copies: int = 1):
    if not progress:
        return None
    from tqdm.auto import tqdm

    from biotok.corpus import total_bytes

    return tqdm(total=(total_bytes(files) or 0) * copies or None, unit="B", unit_scale=True, desc="prepare", dynamic_ncols=True)


def _from_meta(path: Path, meta: dict) -> PreparedData:
    return PreparedData(
        path=path,
        num_tokens=int(meta["num_tokens"]),
        num_sequences=int(meta["num_sequences"]),
        seq_len=int(meta["seq_len"]),
        fingerprint=meta["tokenizer"]["fingerprint"],
        vocab_size=int(meta["tokenizer"]["vocab_size"]),
        dtype=meta["dtype"],
        num_segments=int(meta.get("num_segments", 0)),
        num_documents=int(meta.get("num_documents", 0)),
    )


def read_meta(path: str | Path) -> dict:
    """meta.json of a data directory, with a clear error when it is not one."""
    p = Path(path)
    if not p.exists():
        raise DataError(f"data directory not found: {p} (run `biotok-train prepare` first)")
    if not (p / "meta.json").is_file():
        raise DataError(f"{p} is not a prepared data directory (no meta.json; run `biotok-train prepare`)")
    try:
        meta = json.loads((p / "meta.json").read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataError(f"{p / 'meta.json'} is not valid JSON: {e.msg}") from e
    if meta.get("format") != FORMAT:
        raise DataError(f"{p} has data format {meta.get('format')!r}, expected {FORMAT!r}")
    missing = [f for f in _FILES if not (p / f).is_file()]
    if missing:
        raise DataError(f"{p} is incomplete: missing {', '.join(missing)} (prepare it again)")
    _check_sizes(p, meta)
    return meta


def _check_sizes(p: Path, meta: dict) -> None:
    """Every data file has the size meta.json implies (a truncated copy fails here, not mid-run)."""
    try:
        seq_len, n_tokens, n_seqs = int(meta["seq_len"]), int(meta["num_tokens"]), int(meta["num_sequences"])
        itemsize = np.dtype(meta["dtype"]).itemsize
    except (KeyError, TypeError, ValueError) as e:
        raise DataError(f"{p / 'meta.json'} is damaged ({e!r} missing or wrong); prepare the data again") from None
    if not 8 <= seq_len <= MAX_SEQ_LEN:
        raise DataError(f"{p} holds sequences of {seq_len} tokens; the models take 8 to {MAX_SEQ_LEN} "
                        "(prepare the data again with a --seq-len in that range)")
    expected = {"tokens.bin": n_tokens * itemsize, "word_starts.bin": n_tokens}
    for name, size in expected.items():
        got = (p / name).stat().st_size
        if got != size:
            raise DataError(f"{p / name} is truncated or damaged: {got:,} bytes where meta.json implies "
                            f"{size:,} ({n_tokens:,} tokens); prepare the data again")
    shapes = {"sequences.npy": (n_seqs, 3)}
    if "num_segments" in meta:
        shapes["segments.npy"] = (int(meta["num_segments"]) + 1,)
    if "num_documents" in meta:
        shapes["documents.npy"] = (int(meta["num_documents"]) + 1,)
    for name, shape in shapes.items():
        _check_npy(p / name, shape)


def _check_npy(path: Path, shape: tuple[int, ...]) -> None:
    """``path`` is a complete .npy array of ``shape``."""
    fmt = np.lib.format
    try:
        with open(path, "rb") as f:
            version = fmt.read_magic(f)
            read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            got_shape, _, dtype = read(f)
            need = f.tell() + int(np.prod(got_shape, dtype=np.int64)) * dtype.itemsize
    except (ValueError, OSError, EOFError) as e:
        raise DataError(f"{path} is not a readable .npy array ({e}); prepare the data again") from None
    size = path.stat().st_size
    if tuple(got_shape) != tuple(shape) or size != need:
        raise DataError(f"{path} is truncated or damaged ({size:,} bytes, shape {tuple(got_shape)}; meta.json "
                        f"implies shape {tuple(shape)}); prepare the data again")


def open_prepared(path: str | Path) -> PreparedData:
    """Describe an existing data directory (validated)."""
    return _from_meta(Path(path), read_meta(path))


def load_data_tokenizer(path: str | Path) -> BiotokTokenizer:
    """The tokenizer stored with the data; its fingerprint must equal the one in meta.json."""
    p = Path(path)
    meta = read_meta(p)
    tok = load_hf(p / "tokenizer", name=meta["tokenizer"].get("name"))
    if tok.fingerprint != meta["tokenizer"]["fingerprint"]:
        raise TokenizerMismatchError(f"{p}/tokenizer does not match the fingerprint in {p}/meta.json")
    return tok


def check_tokenizer(path: str | Path, tokenizer: str | Path) -> None:
    """Raise TokenizerMismatchError when ``tokenizer`` is not the one the data was prepared with."""
    meta = read_meta(path)
    tok = load(tokenizer)
    want = meta["tokenizer"]["fingerprint"]
    if tok.fingerprint != want:
        raise TokenizerMismatchError(
            f"{path} was prepared with tokenizer {meta['tokenizer'].get('name')!r} "
            f"(sha256 {want[:12]}), not {tok.name!r} (sha256 {tok.fingerprint[:12]}): "
            "prepare the data again with this tokenizer"
        )
