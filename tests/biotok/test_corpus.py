"""Corpus streaming: formats, directories, stdin, counts, and one clear error per bad input."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import sys

import pytest

from biotok.corpus import CorpusStats, iter_lines, line_pieces, resolve
from biotok.errors import CorpusError

LINES = ["Le patient a 54 ans.", "", "  L’hôpital, 2,5 mg.  ", "Fin"]
EXPECTED = ["Le patient a 54 ans.", "L’hôpital, 2,5 mg.", "Fin"]


def _write(path, opener, text):
    with opener(path, "wt", encoding="utf-8") as f:
        f.write(text)
    return path


@pytest.mark.parametrize(
    "name,opener",
    [("c.txt", open), ("c.txt.gz", gzip.open), ("c.txt.xz", lzma.open), ("c.txt.bz2", bz2.open)],
)
def test_plain_and_compressed(tmp_path, name, opener):
    p = _write(tmp_path / name, opener, "\n".join(LINES) + "\n")
    assert list(iter_lines([p])) == EXPECTED


def test_compression_detected_by_content_not_name(tmp_path):
    p = tmp_path / "looks-plain.txt"
    p.write_bytes(gzip.compress("Bonjour\n".encode()))
    assert list(iter_lines([p])) == ["Bonjour"]


def test_jsonl_field_and_multiline_text(tmp_path):
    p = tmp_path / "docs.jsonl.xz"
    rows = [{"text": "a b\nc\n\n  e\r\n", "id": 1}, {"text": "d", "id": 2}]
    _write(p, lzma.open, "\n".join(json.dumps(r) for r in rows) + "\n")
    assert list(iter_lines([p])) == ["a b c e", "d"]  # a record is one document, its lines joined by a space
    q = tmp_path / "other.jsonl"
    q.write_text(json.dumps({"body": "x y"}) + "\n", encoding="utf-8")
    assert list(iter_lines([q], field_name="body")) == ["x y"]


def test_directory_is_recursive_sorted_and_skips_hidden(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "2.txt").write_text("deux\n", encoding="utf-8")
    (tmp_path / "1.txt").write_text("un\n", encoding="utf-8")
    (tmp_path / ".hidden.txt").write_text("caché\n", encoding="utf-8")
    assert list(iter_lines([tmp_path])) == ["un", "deux"]


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("a\n\nb\n".encode())))
    assert list(iter_lines(["-"])) == ["a", "b"]


def test_stats_count_lines_words_chars_and_hash(tmp_path):
    p = tmp_path / "c.txt"
    p.write_text("a b\nc\n", encoding="utf-8")
    stats = CorpusStats()
    list(iter_lines([p], stats=stats))
    assert (stats.lines, stats.words, stats.characters) == (2, 3, 4)
    (f,) = stats.files
    assert f["bytes"] == 6 and len(f["sha256"]) == 64 and f["lines"] == 2


# --- long lines: memory per line is bounded ------------------------------------------------------
def test_line_pieces_cut_long_lines_at_whitespace_and_keep_every_byte():
    data = ("court\n" + "é" * 10 + " " + "mot " * 30 + "fin\n" + "x" * 25 + "\n").encode()
    for limit in (8, 16, 64):
        pieces = list(line_pieces(io.BytesIO(data), limit))
        assert b"".join(p for _, p, _ in pieces) == data
        assert all(len(p) <= limit for _, p, _ in pieces)
        for _, p, _ in pieces:
            p.decode("utf-8")  # never inside a character
        assert [n for n, _, _ in pieces if n != 2] == [1] + [3] * len([1 for n, _, _ in pieces if n == 3])
        offsets = [o for n, _, o in pieces if n == 2]
        assert offsets[0] == 0 and offsets == sorted(offsets)
    mots = [p for n, p, _ in line_pieces(io.BytesIO(data), 16) if n == 2]
    assert all(p.endswith(b" ") for p in mots[1:-1])  # cut after whitespace


def test_a_long_line_is_read_in_pieces_with_its_words_intact(tmp_path, monkeypatch):
    import biotok.corpus as corpus

    words = [f"mot{i}" for i in range(5000)]
    p = tmp_path / "long.txt"
    p.write_text("avant\n" + " ".join(words) + "\napres\n", encoding="utf-8")
    monkeypatch.setattr(corpus, "line_pieces", lambda f, limit=1000: line_pieces(f, limit))
    stats = CorpusStats()
    texts = list(iter_lines([p], stats=stats))
    assert texts[0] == "avant" and texts[-1] == "apres" and len(texts) > 3
    assert " ".join(texts[1:-1]).split() == words
    assert stats.split_lines == 1 and stats.lines == len(texts) and stats.as_dict()["split_lines"] == 1


def test_bad_utf8_in_a_long_line_names_its_byte_in_the_line(tmp_path, monkeypatch):
    import biotok.corpus as corpus

    p = tmp_path / "bad.txt"
    p.write_bytes(b"ok\n" + b"abc " * 100 + b"\xff\n")
    monkeypatch.setattr(corpus, "line_pieces", lambda f, limit=64: line_pieces(f, limit))
    with pytest.raises(CorpusError, match=r"bad\.txt:2: invalid UTF-8 at byte 400 of the line"):
        list(iter_lines([p]))


def test_missing_file():
    with pytest.raises(CorpusError, match="not found: nope.txt"):
        resolve(["nope.txt"])


def test_empty_directory(tmp_path):
    with pytest.raises(CorpusError, match="contains no files"):
        resolve([tmp_path])


def test_invalid_utf8_names_the_line(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"ok\nencore ok\nd\xe9j\xe0\n")
    with pytest.raises(CorpusError, match=r"bad.txt:3: invalid UTF-8"):
        list(iter_lines([p]))


def test_binary_file(tmp_path):
    p = tmp_path / "x.bin"
    p.write_bytes(b"\x00\x01\x02\x03")
    with pytest.raises(CorpusError, match="binary"):
        list(iter_lines([p]))


def test_broken_gzip(tmp_path):
    p = tmp_path / "c.txt.gz"
    text = "".join(f"ligne {i} {i * 7919 % 10007}\n" for i in range(5000))
    p.write_bytes(gzip.compress(text.encode())[:2000])
    with pytest.raises(CorpusError, match="broken compressed stream"):
        list(iter_lines([p]))


def test_bad_json_line(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"text": "a"}\n{oops\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"c.jsonl:2: invalid JSON"):
        list(iter_lines([p]))
    q = tmp_path / "d.jsonl"
    q.write_text('{"body": "a"}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match="no field 'text'"):
        list(iter_lines([q]))


def test_batches_are_bounded_in_lines_and_characters():
    from biotok.corpus import batches

    lines = ["x" * 10] * 25 + ["y" * 100] * 3
    got = list(batches(lines, max_lines=10, max_chars=120))
    assert [l for b in got for l in b] == lines
    assert all(len(b) <= 10 for b in got)
    assert all(sum(map(len, b)) < 120 + 100 for b in got)  # at most one line past the bound
    assert [len(b) for b in got][-3:] == [2, 1, 1] or max(sum(map(len, b)) for b in got) <= 200
