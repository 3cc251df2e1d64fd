"""prepare: packed, memory-mapped shards with word starts, documents and a tokenizer fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from biotok.errors import BiotokError, CorpusError, OutputExistsError
from biotok.formats import load
from biotok_train.pretrain.prepare import (
    SPECIALS_OVERHEAD,
    check_tokenizer,
    open_prepared,
    pack_sequences,
    prepare,
    read_meta,
    token_dtype,
)
from biotok_train.config import PrepareConfig
from biotok_train.errors import DataError, TokenizerMismatchError


@pytest.fixture(scope="module")
def two_files(sample_lines, tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("pcorpus")
    a, b = d / "a.txt", d / "b.txt.gz"
    a.write_text("\n".join(sample_lines[:60]) + "\n\n", encoding="utf-8")
    import gzip

    with gzip.open(b, "wt", encoding="utf-8") as f:
        f.write("\n".join(sample_lines[60:100]) + "\n")
    return [a, b]


@pytest.fixture(scope="module")
def prepared(two_files, tiny_wordpiece, tmp_path_factory):
    out = tmp_path_factory.mktemp("pdata") / "data"
    return prepare([str(p) for p in two_files], tiny_wordpiece, PrepareConfig(seq_len=64), out, progress=False)


def test_layout_and_meta(prepared, tiny_wordpiece):
    meta = read_meta(prepared.path)
    tok = load(tiny_wordpiece)
    assert meta["tokenizer"]["fingerprint"] == tok.fingerprint == prepared.fingerprint
    assert meta["dtype"] == "uint16" and prepared.dtype == "uint16"
    assert meta["num_documents"] == 2 and meta["num_segments"] == 100
    tokens = np.memmap(prepared.path / "tokens.bin", dtype=np.uint16, mode="r")
    assert len(tokens) == prepared.num_tokens == meta["num_tokens"]
    assert meta["tokenizer"]["special_ids"]["mask"] == tok.mask_id
    assert (prepared.path / "tokenizer" / "tokenizer.json").is_file()
    assert open_prepared(prepared.path) == prepared


def test_tokens_and_word_starts_match_the_tokenizer(prepared, sample_lines, tiny_wordpiece):
    tok = load(tiny_wordpiece)
    tokens = np.memmap(prepared.path / "tokens.bin", dtype=np.uint16, mode="r")
    flags = np.memmap(prepared.path / "word_starts.bin", dtype=np.uint8, mode="r")
    segments = np.load(prepared.path / "segments.npy")
    for k in (0, 7, 61, 99):
        enc = tok.encode(sample_lines[k])
        s, e = segments[k], segments[k + 1]
        assert tokens[s:e].tolist() == enc.ids
        assert flags[s:e].astype(bool).tolist() == enc.word_starts


def test_sequences_are_packed_within_documents(prepared):
    seqs = np.load(prepared.path / "sequences.npy")
    segments = np.load(prepared.path / "segments.npy")
    documents = np.load(prepared.path / "documents.npy")
    doc_bounds = segments[documents]  # token offsets of document starts (+ end)
    content = prepared.seq_len - SPECIALS_OVERHEAD
    assert seqs[0, 0] == 0 and seqs[-1, 2] == prepared.num_tokens
    assert (seqs[1:, 0] == seqs[:-1, 2]).all()  # contiguous: no token lost
    assert ((seqs[:, 0] <= seqs[:, 1]) & (seqs[:, 1] <= seqs[:, 2])).all()
    lengths = seqs[:, 2] - seqs[:, 0]
    short = np.flatnonzero(lengths < content)
    assert len(short) <= 2  # only a document's last window may be short
    for s, _, e in seqs:
        d = np.searchsorted(doc_bounds, s, side="right") - 1
        assert e <= doc_bounds[d + 1]  # never across documents
    # splits fall on line boundaries when the window holds one
    inner = set(segments.tolist())
    on_line = sum(int(p in inner) for s, p, e in seqs if any(s < b < e for b in segments))
    assert on_line == sum(1 for s, p, e in seqs if any(s < b < e for b in segments))


def test_pack_sequences_split_on_word_start():
    segments = np.array([0, 20], dtype=np.int64)
    documents = np.array([0, 1], dtype=np.int64)
    ws = np.zeros(20, dtype=np.uint8)
    ws[[0, 3, 6, 9, 12, 15, 18]] = 1
    rows = pack_sequences(segments, documents, ws, 13)  # 10 content tokens
    assert rows.tolist() == [[0, 6, 10], [10, 15, 20]]  # the word start nearest each middle
    # a line boundary inside the window wins over word starts
    rows = pack_sequences(np.array([0, 2, 20]), np.array([0, 2]), ws, 13)
    assert rows.tolist() == [[0, 2, 10], [10, 15, 20]]


def test_dtype_by_vocab_size():
    assert token_dtype(65535) == np.uint16 and token_dtype(65536) == np.uint32


def test_existing_output_needs_force(two_files, tiny_wordpiece, prepared):
    with pytest.raises(OutputExistsError):
        prepare([str(two_files[0])], tiny_wordpiece, PrepareConfig(seq_len=64), prepared.path, progress=False)


def test_force_and_jsonl_field(sample_lines, tiny_wordpiece, tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_text("\n".join(json.dumps({"body": l}) for l in sample_lines[:20]) + "\n", encoding="utf-8")
    out = tmp_path / "d"
    out.mkdir()
    (out / "junk").write_text("x")
    with pytest.raises(OutputExistsError, match="not a biotok output"):  # force replaces prepared data only
        prepare([str(src)], tiny_wordpiece, PrepareConfig(field_name="body"), out, force=True, progress=False)
    (out / "meta.json").write_text("{}")  # older prepared data there
    p = prepare([str(src)], tiny_wordpiece, PrepareConfig(field_name="body"), out, force=True, progress=False)
    assert p.num_tokens > 0 and p.seq_len == 128 and not (out / "junk").exists()


def test_other_tokenizer_is_refused(prepared, tmp_path, sample_lines):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(sample_lines[:50], trainers.WordPieceTrainer(
        vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    tok.save(str(tmp_path / "other.json"))
    with pytest.raises(TokenizerMismatchError, match="prepare the data again"):
        check_tokenizer(prepared.path, tmp_path / "other.json")


def test_bad_inputs(tmp_path, tiny_wordpiece):
    with pytest.raises(DataError, match="not found"):
        read_meta(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="not a prepared data directory"):
        read_meta(tmp_path / "empty")
    with pytest.raises(CorpusError):
        prepare([str(tmp_path / "missing.txt")], tiny_wordpiece, PrepareConfig(), tmp_path / "o", progress=False)
    assert issubclass(DataError, BiotokError)


@pytest.mark.shared
def test_large_reference_tokenizer_uint16(shared_data, sample_lines, tmp_path):
    src = tmp_path / "c.txt"
    src.write_text("\n".join(sample_lines[:10]) + "\n", encoding="utf-8")
    p = prepare([str(src)], shared_data / "tokenizers" / "camemberta-base", PrepareConfig(), tmp_path / "d",
                progress=False)
    assert p.vocab_size == 32003 and p.dtype == "uint16"


def test_batches_frame_segments_and_swap_for_sop(prepared):
    from biotok_train.pretrain.packed import PackedData

    data = PackedData(prepared.path)
    idx = np.arange(min(32, len(data)))
    plain, sop = data.batch(idx), data.batch(idx, sop=True, seed=3)
    assert 0 < sop.sop_labels.sum() < len(idx)  # some swapped, some not
    seqs = np.load(prepared.path / "sequences.npy")
    for row, i in enumerate(idx):
        s, p, e = seqs[i]
        ids = plain.input_ids[row].tolist()
        a, b = ids[1 : 1 + p - s], ids[2 + p - s : 2 + e - s]
        assert ids[0] == data.cls_id and ids[1 + p - s] == data.sep_id and ids[2 + e - s] == data.sep_id
        assert plain.token_type_ids[row].tolist().count(1) == len(b) + 1
        sid = sop.input_ids[row].tolist()
        first, second = (b, a) if sop.sop_labels[row] else (a, b)
        assert sid[1 : 1 + len(first)] == first and sid[2 + len(first) : 2 + len(first) + len(second)] == second
    assert not plain.word_starts[plain.special].any()


# --- subword regularization -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def sampled(two_files, tiny_unigram, tmp_path_factory):
    d = tmp_path_factory.mktemp("sampled")
    files, sampling = [str(p) for p in two_files], PrepareConfig(seq_len=64, sample_alpha=0.1, copies=3, seed=4)
    a = prepare(files, tiny_unigram, sampling, d / "a", progress=False)
    b = prepare(files, tiny_unigram, sampling, d / "b", progress=False)
    plain = prepare(files, tiny_unigram, PrepareConfig(seq_len=64), d / "plain", progress=False)
    return a, b, plain


def test_sampled_copies_are_reproducible_and_differ(sampled):
    a, b, plain = sampled
    for name in ("tokens.bin", "word_starts.bin", "sequences.npy"):
        assert (a.path / name).read_bytes() == (b.path / name).read_bytes(), name
    meta = read_meta(a.path)
    assert meta["sampling"] == {"algorithm": "Unigram", "alpha": 0.1, "copies": 3, "seed": 4,
                                "documents": "each copy of each input file is one document"}
    assert meta["num_documents"] == 3 * read_meta(plain.path)["num_documents"] == 6
    assert meta["num_segments"] == 3 * read_meta(plain.path)["num_segments"]
    segs = np.load(a.path / "segments.npy")
    tokens = np.memmap(a.path / "tokens.bin", dtype=np.uint16, mode="r")
    n = meta["num_segments"] // 3
    copies = [tokens[segs[k * n]:segs[(k + 1) * n]].tolist() for k in range(3)]
    assert len({tuple(c) for c in copies}) == 3  # three different segmentations
    assert all(len(c) > plain.num_tokens for c in copies)  # sampled: more pieces than the best


def test_word_starts_are_exact_in_every_copy(sampled, tiny_unigram):
    a, _, plain = sampled
    tok = load(tiny_unigram)
    tokens = np.memmap(a.path / "tokens.bin", dtype=np.uint16, mode="r")
    starts = np.memmap(a.path / "word_starts.bin", dtype=np.uint8, mode="r")
    pieces = [tok.id_to_token(int(t)) for t in tokens]
    assert starts.tolist() == [int(p.startswith("▁")) for p in pieces]
    # every copy has one start per word: as many as the plain data
    plain_starts = int(np.memmap(plain.path / "word_starts.bin", dtype=np.uint8, mode="r").sum())
    assert int(starts.sum()) == 3 * plain_starts


def test_copies_need_sampling(two_files, tiny_unigram, tiny_wordpiece, tmp_path):
    with pytest.raises(BiotokError, match="--copies needs --sample-alpha"):
        PrepareConfig(copies=2)
    with pytest.raises(BiotokError, match="Unigram or BPE"):
        prepare([str(two_files[0])], tiny_wordpiece, PrepareConfig(sample_alpha=0.1), tmp_path / "y", progress=False)
    with pytest.raises(BiotokError, match="must be > 0"):
        PrepareConfig(sample_alpha=0.0)
