"""Parallel word counts equal one-process counts; count files merge; scaling keeps its bound."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biotok.backends.spm import scale_counts, spm_seed_bytes
from biotok.config import NormalizeConfig
from biotok.corpus import iter_lines
from biotok.counting import count_corpus, line_ranges, read_count_files, read_counts, write_counts
from biotok.errors import CorpusError
from biotok.normalize import build_normalizer

LOWER = NormalizeConfig(lowercase=True)


def _reference(paths, cfg, field_name=None) -> Counter:
    """Counts the slow, obvious way: every line normalized alone, split, counted."""
    norm = build_normalizer(cfg)
    out: Counter = Counter()
    for line in iter_lines(paths, field_name):
        out.update(norm.normalize_str(line).split())
    return out


@pytest.fixture(scope="module")
def mixed_corpus(tmp_path_factory, sample_corpus):
    """The sample as plain text, gzip and JSON lines: byte ranges and streamed batches."""
    d = tmp_path_factory.mktemp("mixed")
    lines = sample_corpus.read_text(encoding="utf-8").splitlines()
    plain = d / "a.txt"
    plain.write_text("\n".join(lines[:1200]) + "\n", encoding="utf-8")
    gz = d / "b.txt.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines[1200:]) + "\n")
    js = d / "c.jsonl"
    js.write_text("".join(json.dumps({"text": l}) + "\n" for l in lines[:300]), encoding="utf-8")
    return [plain, gz, js]


def test_one_worker_equals_the_reference(mixed_corpus):
    got = count_corpus(mixed_corpus, LOWER, workers=1, chunk_bytes=1 << 16)
    assert got.counts == _reference(mixed_corpus, LOWER)
    assert got.lines == sum(f["lines"] for f in got.files) == sum(1 for _ in iter_lines(mixed_corpus))


def test_workers_and_chunks_do_not_change_the_result(mixed_corpus):
    one = count_corpus(mixed_corpus, LOWER, workers=1)
    two = count_corpus(mixed_corpus, LOWER, workers=2, chunk_bytes=1 << 15)
    assert two.counts == one.counts
    assert two.stats() == one.stats()
    assert [f["sha256"] for f in two.files] == [f["sha256"] for f in one.files]


def test_line_ranges_cover_the_file_at_line_starts(tmp_path):
    p = tmp_path / "x.txt"
    data = b"".join(b"line %d " % i + b"x" * (i % 37) + b"\n" for i in range(2000))
    p.write_bytes(data)
    ranges = line_ranges(str(p), chunk_bytes=1000)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert all(data[s - 1 : s] == b"\n" for s, _ in ranges[1:])


def test_an_error_names_the_first_bad_line_whatever_the_worker(tmp_path):
    p = tmp_path / "bad.txt"
    good = "une ligne correcte de texte\n" * 3000
    p.write_bytes(good.encode() + b"caf\xe9\n" + good.encode() + b"\xff\n")
    with pytest.raises(CorpusError) as one:
        list(iter_lines([p]))
    for workers in (1, 2):
        with pytest.raises(CorpusError) as e:
            count_corpus([p], None, workers=workers, chunk_bytes=4096)
        assert str(e.value) == str(one.value) == f"{p}:3001: invalid UTF-8 at byte 3 of the line"


# --- joined batches ------------------------------------------------------------------------------
LINE = st.lists(
    st.sampled_from(["l'", "d'", "qu'", "’", "«", "»", "-", "/", ".", ",", "(", ")", "2,5", "10⁹",
                     "\u0301", "e\u0301", "ﬁ", "Σ", "ς", "\u00a0", "\u200b", "\u00ad", "\t", "\r",
                     "\u2028", "\x85", "Hôpital", "IL-6", "aujourd'hui", " ", "'"])
    | st.text("abcéÉ0189 .,;:'()-/%", min_size=1, max_size=5),
    min_size=1, max_size=12,
).map("".join).map(str.strip).filter(bool)


@pytest.mark.parametrize("cfg", [NormalizeConfig(), LOWER, NormalizeConfig(lowercase=True, strip_accents=True)],
                         ids=["cased", "lower", "no-accents"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(LINE, min_size=1, max_size=8))
def test_normalizing_joined_lines_equals_line_by_line(cfg, lines):
    """The premise of batching: no normalization step works across a newline (which the
    whitespace step turns into a space), so the words of joined lines are the lines' words."""
    norm = build_normalizer(cfg)
    joined = norm.normalize_str("\n".join(lines)).split()
    assert joined == [w for l in lines for w in norm.normalize_str(l).split()]


# --- count files ----------------------------------------------------------------------------------
def test_shard_counts_add_up_to_the_whole(tmp_path, sample_corpus):
    lines = sample_corpus.read_text(encoding="utf-8").splitlines()
    shards = []
    for i in range(3):
        p = tmp_path / f"shard{i}.txt"
        p.write_text("\n".join(lines[i::3]) + "\n", encoding="utf-8")
        shards.append(p)
    tsvs = []
    for p in shards:
        t = tmp_path / f"{p.stem}.tsv"
        with open(t, "w", encoding="utf-8") as f:
            write_counts(count_corpus([p], LOWER, workers=1).counts, f)
        tsvs.append(t)
    whole = count_corpus([sample_corpus], LOWER, workers=1).counts
    assert read_count_files(tsvs) == whole


def test_count_file_roundtrip_and_order(tmp_path):
    c = Counter({"b": 2, "a": 2, "c": 5, "é": 1})
    p = tmp_path / "c.tsv"
    with open(p, "w", encoding="utf-8") as f:
        assert write_counts(c, f) == 4
    assert p.read_text(encoding="utf-8") == "c\t5\na\t2\nb\t2\né\t1\n"
    assert read_counts(p) == c


@pytest.mark.parametrize("bad", ["word\n", "a b\t3\n", "w\t0\n", "w\t-2\n", "w\tx\n", "\t4\n"])
def test_bad_count_lines_are_named(tmp_path, bad):
    p = tmp_path / "c.tsv"
    p.write_text("ok\t3\n" + bad, encoding="utf-8")
    with pytest.raises(CorpusError, match=r"c\.tsv:2: expected word<TAB>count"):
        read_counts(p)


def test_missing_counts_file(tmp_path):
    with pytest.raises(CorpusError, match="counts file not found"):
        read_count_files([tmp_path / "nope.tsv"])


# --- scaling --------------------------------------------------------------------------------------
def test_counts_within_the_budget_are_unchanged():
    c = Counter({"le": 10, "patient": 3})
    scaled, info = scale_counts(c, budget_bytes=10_000)
    assert scaled == c and info.factor == 1.0 and info.seed_text_bytes == spm_seed_bytes(c)


def test_scaling_meets_the_budget_and_keeps_every_word(sample_corpus):
    c = count_corpus([sample_corpus], LOWER, workers=1).counts
    full = spm_seed_bytes(c)
    budget = full // 4  # above twice one copy of every word: the budget binds
    assert budget > 2 * sum(len(w.encode()) + 4 for w in c)
    scaled, info = scale_counts(c, budget)
    assert set(scaled) == set(c) and min(scaled.values()) >= 1
    assert spm_seed_bytes(scaled) == info.scaled_seed_text_bytes <= budget
    assert info.scaled_seed_text_bytes > budget * 0.95  # the largest factor that fits
    assert 0.1 < info.factor < 0.25
    # one factor for all: order by frequency is kept (ties may appear, never inversions)
    ranked = sorted(c, key=lambda w: (-c[w], w))
    assert all(scaled[a] >= scaled[b] for a, b in zip(ranked, ranked[1:]))
    assert scale_counts(c, budget) == (scaled, info)


def test_a_budget_below_the_distinct_words_keeps_twice_their_size():
    c = Counter({f"mot{i}": 100_000 // (i + 1) for i in range(100)})
    floor = sum(len(w) + 4 for w in c)
    scaled, info = scale_counts(c, budget_bytes=10)
    assert info.scaled_seed_text_bytes <= 2 * floor
    assert len(set(scaled.values())) > 1  # frequencies still tell words apart


def test_long_lines_count_the_same_on_any_worker(tmp_path):
    """A 2.5 MB line is read in 1 MiB pieces cut at whitespace: same words, counted as split."""
    p = tmp_path / "long.txt"
    words = [f"mot{i % 997}" for i in range(400_000)]
    p.write_text("début\n" + " ".join(words) + "\nfin\n" + "court\n" * 50, encoding="utf-8")
    one = count_corpus([p], None, workers=1)
    two = count_corpus([p], None, workers=2, chunk_bytes=1 << 16)
    assert one.counts == two.counts == Counter(["début", "fin", *words] + ["court"] * 50)
    assert one.split_lines == two.split_lines == 1
    assert one.stats() == two.stats()


def test_a_worker_orphaned_before_it_started_exits_at_once():
    """A pool worker still starting when its parent is SIGKILLed is orphaned before its initializer
    runs: it compares with the pid the parent gave it, not with whatever os.getppid() says then."""
    import subprocess
    import sys

    code = ("import os; from biotok.counting import _exit_with_parent; "
            "_exit_with_parent(os.getppid()); print('watching', flush=True); "
            "_exit_with_parent(os.getppid() + 1_000_000); print('still here')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and res.stdout == "watching\n"


def test_workers_are_capped_at_the_cores_and_absurd_values_refused(caplog):
    from biotok.counting import MAX_WORKERS, default_workers, usable_workers
    from biotok.errors import ConfigError

    cores = default_workers()
    assert usable_workers(None) == cores
    assert usable_workers(1) == 1
    with caplog.at_level("INFO", logger="biotok.counting"):
        assert usable_workers(cores + 7) == cores
    assert f"capped at {cores}" in caplog.text
    for bad in (0, -3, MAX_WORKERS + 1, 100_000):
        with pytest.raises(ConfigError, match=str(bad)):
            usable_workers(bad)
