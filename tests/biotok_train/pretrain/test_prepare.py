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


def _pack_reference(segments, documents, word_starts, seq_len):
    """pack_sequences as a plain loop (the implementation before it was vectorized)."""
    content, rows = seq_len - SPECIALS_OVERHEAD, []
    for d in range(len(documents) - 1):
        seg_lo, seg_hi = int(documents[d]), int(documents[d + 1])
        ds, de = int(segments[seg_lo]), int(segments[seg_hi])
        bounds = segments[seg_lo + 1 : seg_hi]
        start = ds
        while start < de:
            end = min(start + content, de)
            split = end
            if end - start >= 2:
                mid = (start + end) / 2
                inner = bounds[np.searchsorted(bounds, start, side="right"):np.searchsorted(bounds, end, side="left")]
                starts = np.flatnonzero(word_starts[start + 1 : end]) + start + 1
                split = (int(inner[np.argmin(np.abs(inner - mid))]) if len(inner) else
                         int(starts[np.argmin(np.abs(starts - mid))]) if len(starts) else int(mid))
            rows.append((start, split, end))
            start = end
    return np.asarray(rows, dtype=np.int64).reshape(-1, 3)


@pytest.mark.parametrize("seed", range(6))
def test_pack_sequences_equals_the_plain_loop(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.choice([1, 2, 3, 7, 20, 61, 200], size=300)  # short lines, and lines longer than a window
    segments = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    cuts = np.sort(rng.choice(np.arange(1, 300), size=12, replace=False))
    documents = np.concatenate([[0], cuts, [300]]).astype(np.int64)
    word_starts = (rng.random(int(segments[-1])) < [0.0, 0.3, 0.7][seed % 3]).astype(np.uint8)
    for seq_len in (8, 13, 64, 128):
        got = pack_sequences(segments, documents, word_starts, seq_len)
        assert got.dtype == np.int64 and got.tolist() == _pack_reference(segments, documents, word_starts, seq_len).tolist()


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


# --- on N worker processes (encode_pool) ----------------------------------------------------------
import logging  # noqa: E402
import multiprocessing  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402

from biotok.errors import ConfigError  # noqa: E402
from biotok_train.pretrain import encode_pool  # noqa: E402
from biotok_train.pretrain import prepare as prepare_module  # noqa: E402
from tests._contract import cli_cmd, leftovers, tree_digest  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
_POOL_LOG = "biotok_train.pretrain.encode_pool"


@pytest.fixture()
def small_chunks(monkeypatch):
    """Many small chunks (finished out of order by the workers) and room for 3 workers on any machine."""
    monkeypatch.setattr(prepare_module, "CHUNK_LINES", 37)
    monkeypatch.setattr(prepare_module, "CHUNK_CHARS", 1 << 13)
    monkeypatch.setattr(encode_pool, "available_cores", lambda: 4)


@pytest.fixture(scope="module")
def mixed_corpus(sample_corpus, sample_lines, tmp_path_factory) -> list[str]:
    """The sample corpus, an empty file, a gzipped file and a file of blank lines (no document)."""
    import gzip

    d = tmp_path_factory.mktemp("mixed")
    (d / "empty.txt").write_text("", encoding="utf-8")
    with gzip.open(d / "b.txt.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(sample_lines[:300]) + "\n")
    (d / "blank.txt").write_text("\n \n\n", encoding="utf-8")
    return [str(sample_corpus), str(d / "empty.txt"), str(d / "b.txt.gz"), str(d / "blank.txt")]


def _same_data(a: Path, b: Path) -> None:
    digest_a, digest_b = tree_digest(a), tree_digest(b)
    assert set(digest_a) == set(digest_b)
    for name in sorted(digest_a):
        assert digest_a[name] == digest_b[name], name


@pytest.mark.parametrize("which", ["tiny_unigram", "tiny_wordpiece"])
def test_workers_give_the_same_bytes(which, request, mixed_corpus, small_chunks, tmp_path, caplog):
    tok = request.getfixturevalue(which)  # SentencePiece-trained Unigram, tokenizers-trained WordPiece
    one = prepare(mixed_corpus, tok, PrepareConfig(seq_len=64, workers=1), tmp_path / "one", progress=False)
    with caplog.at_level(logging.DEBUG, logger=_POOL_LOG):
        three = prepare(mixed_corpus, tok, PrepareConfig(seq_len=64), tmp_path / "three", progress=False, workers=3)
    assert "tokenizing on 3 worker processes" in caplog.text
    assert read_meta(one.path)["num_documents"] == 2  # the empty and the blank file make none
    _same_data(one.path, three.path)
    assert multiprocessing.active_children() == []  # the pool is gone


def test_workers_give_the_same_sampled_copies(two_files, tiny_unigram, small_chunks, tmp_path):
    files = [str(p) for p in two_files]
    cfg = PrepareConfig(seq_len=64, sample_alpha=0.1, copies=3, seed=4)
    one = prepare(files, tiny_unigram, cfg, tmp_path / "one", progress=False, workers=1)
    three = prepare(files, tiny_unigram, cfg, tmp_path / "three", progress=False, workers=3)
    _same_data(one.path, three.path)


@pytest.mark.shared
def test_workers_give_the_same_bytes_on_shared_data(shared_data, tmp_path):
    """CamemBERTa's SentencePiece vocabulary and bert-base-cased's WordPiece on E3C's clinical cases (JSON lines, xz)."""
    corpus = [str(shared_data / "corpora" / "e3c-fr" / "layer3_fr_pamj_ccby.jsonl.xz")]
    for name in ("camemberta-base", "bert-base-cased"):
        tok = shared_data / "tokenizers" / name
        cfg = PrepareConfig(field_name="text")
        one = prepare(corpus, tok, cfg, tmp_path / name / "one", progress=False, workers=1)
        two = prepare(corpus, tok, cfg, tmp_path / name / "two", progress=False, workers=2)
        _same_data(one.path, two.path)


def test_workers_option(tmp_path, sample_corpus, tiny_wordpiece):
    with pytest.raises(ConfigError, match="--workers"):
        PrepareConfig(workers=-1)
    with pytest.raises(ConfigError, match="--workers"):
        prepare([str(sample_corpus)], tiny_wordpiece, PrepareConfig(), tmp_path / "d", progress=False, workers=5000)
    assert not (tmp_path / "d").exists()
    cores = encode_pool.available_cores()
    assert encode_pool.usable_workers(0, None) == cores  # stdin: size unknown
    assert encode_pool.usable_workers(0, encode_pool.AUTO_MIN_BYTES) == cores
    assert encode_pool.usable_workers(0, encode_pool.AUTO_MIN_BYTES - 1) == 1  # a small corpus: one process
    assert encode_pool.usable_workers(cores + 5, None) == cores
    assert encode_pool.usable_workers(1, None) == 1


def _prepare_logged(*args, **kwargs):
    """prepare() in a pool worker, with what encode_pool logged there."""
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda r: records.append(r.getMessage())  # type: ignore[method-assign]
    log = logging.getLogger(_POOL_LOG)
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        return prepare(*args, **kwargs), records
    finally:
        log.removeHandler(handler)


def test_prepare_inside_a_spawned_worker_uses_its_own_pool(sample_corpus, tiny_wordpiece, tmp_path):
    """The ablation's --engine processes runs prepare in a spawn pool's worker: a nested pool there."""
    if encode_pool.available_cores() < 2:
        pytest.skip("needs 2 cores")
    cfg = PrepareConfig(seq_len=64)
    one = prepare([str(sample_corpus)], tiny_wordpiece, cfg, tmp_path / "one", progress=False, workers=1)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as ex:
        two, said = ex.submit(_prepare_logged, [str(sample_corpus)], str(tiny_wordpiece), cfg, tmp_path / "two",
                              progress=False, workers=2).result(timeout=600)
    assert said == ["tokenizing on 2 worker processes"]
    _same_data(one.path, two.path)


def test_prepare_in_a_daemonic_worker_runs_in_one_process(sample_corpus, tiny_wordpiece, tmp_path):
    """multiprocessing.Pool's workers are daemonic and may not start processes: one process, no error."""
    cfg = PrepareConfig(seq_len=64)
    one = prepare([str(sample_corpus)], tiny_wordpiece, cfg, tmp_path / "one", progress=False, workers=1)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        two, said = pool.apply(_prepare_logged, ([str(sample_corpus)], str(tiny_wordpiece), cfg, tmp_path / "two"),
                               {"progress": False, "workers": 2})
    assert said == ["tokenizing in one process: this is a daemonic worker process (it may not have children)"]
    _same_data(one.path, two.path)


def test_plain_script_without_main_guard(sample_corpus, tiny_wordpiece, tmp_path):
    """A script calling prepare at its top level: the workers do not run it again (issue 39)."""
    if encode_pool.available_cores() < 2:
        pytest.skip("needs 2 cores")
    script, ran = tmp_path / "script.py", tmp_path / "ran.txt"
    script.write_text(
        "import logging, sys\n"
        "logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format='%(message)s')\n"
        f"open({str(ran)!r}, 'a').write('ran\\n')\n"
        "from biotok_train.config import PrepareConfig\n"
        "from biotok_train.pretrain.prepare import prepare\n"
        f"p = prepare([{str(sample_corpus)!r}], {str(tiny_wordpiece)!r}, PrepareConfig(seq_len=64, workers=2),\n"
        f"            {str(tmp_path / 'two')!r}, progress=False)\n"
        "print(p.num_tokens)\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "tokenizing on 2 worker processes" in proc.stderr
    assert ran.read_text() == "ran\n"  # run once: by python, never by a worker
    one = prepare([str(sample_corpus)], tiny_wordpiece, PrepareConfig(seq_len=64, workers=1), tmp_path / "one",
                  progress=False)
    assert int(proc.stdout) == one.num_tokens
    _same_data(one.path, tmp_path / "two")


def test_a_worker_that_dies_is_one_error(sample_corpus, tiny_wordpiece, tmp_path):
    import threading

    killed: list[int] = []
    before = {c.pid for c in multiprocessing.active_children()}  # another test's: never this one's workers

    def kill_a_worker() -> None:
        for _ in range(6000):
            children = [c for c in multiprocessing.active_children() if c.pid not in before]
            if children:
                os.kill(children[0].pid, signal.SIGKILL)
                killed.append(children[0].pid)
                return
            time.sleep(0.01)

    t = threading.Thread(target=kill_a_worker)
    t.start()
    try:
        with pytest.raises(DataError, match="a tokenizing worker process died"):
            prepare([str(sample_corpus)] * 30, tiny_wordpiece, PrepareConfig(seq_len=64), tmp_path / "d",
                    progress=False, workers=2)  # long enough that a loaded machine cannot finish before the kill
    finally:
        t.join()
    assert killed
    assert not (tmp_path / "d").exists() and leftovers(tmp_path, "d") == []
    assert [c for c in multiprocessing.active_children() if c.pid not in before] == []


def test_bad_input_with_workers_is_one_error(sample_corpus, tiny_wordpiece, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes("une ligne\n".encode() * 100 + b"\xff\xfe pas de l'UTF-8\n")
    with pytest.raises(CorpusError, match="bad.txt"):
        prepare([str(sample_corpus), str(bad)], tiny_wordpiece, PrepareConfig(), tmp_path / "d", progress=False,
                workers=2)
    assert not (tmp_path / "d").exists() and leftovers(tmp_path, "d") == []
    assert multiprocessing.active_children() == []


def _children(pid: int) -> set[int]:
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_workers(sig, sample_corpus, tiny_wordpiece, tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(sample_corpus.read_bytes() * 6)
    out = tmp_path / "run" / "data"
    p = subprocess.Popen([*cli_cmd("biotok-train"), "prepare", str(big), "-t", str(tiny_wordpiece), "--workers", "2",
                          "--out", str(out), "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    workers: set[int] = set()
    for _ in range(6000):  # until both workers run (or the run ended: then the corpus is too small)
        workers = _children(p.pid)
        if len(workers) >= 2 or p.poll() is not None:
            break
        time.sleep(0.01)
    assert p.poll() is None, "prepare ended before the signal: make the corpus bigger"
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    assert p.returncode == (130 if sig == signal.SIGINT else 143), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists() and leftovers(out.parent, "data") == []
    for _ in range(500):  # the workers are stopped with the pool (at most a second after)
        if not any(Path(f"/proc/{w}").exists() for w in workers):
            break
        time.sleep(0.01)
    assert not any(Path(f"/proc/{w}").exists() for w in workers)
