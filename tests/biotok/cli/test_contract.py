"""The error contract of ``biotok`` under disk faults, kills and misuse (issue 16).

Every case: exit 2, one ``biotok: error:`` line naming the path, no traceback, and the inputs and
any previous output byte-identical afterwards (hashed before and after). Read-only and full disks
are tiny tmpfs mounts (the tests run as root here and in CI); without root, read-only falls back
to ``chmod`` and the full-disk cases skip with the reason.

Kills: SIGTERM and SIGINT are caught and the run cleans up (no ``.OUT.*`` sibling, nothing in
``$TMPDIR``). SIGKILL cannot be caught: every temporary file of a run lives in one hidden sibling
``.OUT.<pid>.*.tmp`` beside ``--out`` (stdin spool and backend scratch included), and the next run
writing to the same ``--out`` removes the siblings of processes that are gone.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests._contract import Mounts, assert_contract, assert_proc_contract, cli_cmd, leftovers, modes, tree_digest
from biotok.cli import main

PROG = "biotok"


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, prog_name=PROG)


@pytest.fixture()
def mounts(tmp_path):
    m = Mounts(tmp_path / "mounts")
    yield m
    m.close()


@pytest.fixture(scope="module")
def lines(sample_lines):
    return sample_lines[:120]


@pytest.fixture()
def corpus(tmp_path, lines):
    p = tmp_path / "corpus" / "c.txt"
    p.parent.mkdir()
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def tok(tmp_path_factory, lines):
    """A small WordPiece artifact (fast to train, deterministic)."""
    d = tmp_path_factory.mktemp("contract-tok")
    c = d / "c.txt"
    c.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = run("train", c, "--algo", "wordpiece", "--vocab-size", 400, "--out", d / "tok", "-q")
    assert r.exit_code == 0, r.output
    return d / "tok"


TRAIN = ("--algo", "wordpiece", "--vocab-size", 400, "--workers", 1, "-q")


def _copy_tok(src: Path, dest: Path) -> None:
    dest.mkdir(parents=True)
    for f in src.iterdir():
        (dest / f.name).write_bytes(f.read_bytes())


# --- read-only output folders ------------------------------------------------------------------
def test_train_into_read_only_folder(mounts, corpus):
    ro = mounts.read_only()
    before = tree_digest(ro)
    assert_contract(run("train", corpus, *TRAIN, "--out", ro / "tok"), PROG, ro / "tok")
    assert tree_digest(ro) == before


def test_train_force_over_previous_output_in_read_only_folder(mounts, corpus, tok):
    ro = mounts.read_only(populate=lambda m: _copy_tok(tok, m / "tok"))
    before = tree_digest(ro)
    assert_contract(run("train", corpus, *TRAIN, "--out", ro / "tok", "--force"), PROG, ro / "tok")
    assert tree_digest(ro) == before


def test_count_into_read_only_folder(mounts, corpus):
    ro = mounts.read_only()
    before = tree_digest(ro)
    assert_contract(run("count", corpus, "--out", ro / "counts.tsv", "-q"), PROG, ro / "counts.tsv")
    assert tree_digest(ro) == before


def test_compare_plot_into_read_only_folder(mounts, tok):
    ro = mounts.read_only()
    before = tree_digest(ro)
    assert_contract(run("compare", tok, tok, "--plot", ro / "overlap.png"), PROG, ro / "overlap.png")
    assert tree_digest(ro) == before


def test_report_into_read_only_folder(mounts, tok, corpus):
    ro = mounts.read_only()
    before = tree_digest(ro)
    r = run("report", tok, "--corpus", corpus, "--out", ro / "rep", "--no-progress")
    assert_contract(r, PROG, ro / "rep")
    assert tree_digest(ro) == before


def test_count_under_a_file_not_a_folder(corpus):
    before = tree_digest(corpus.parent)
    out = corpus / "counts.tsv"  # the "folder" is the corpus file itself
    assert_contract(run("count", corpus, "--out", out, "-q"), PROG, out)
    assert tree_digest(corpus.parent) == before


# --- full disk ---------------------------------------------------------------------------------
def test_train_on_a_full_disk_keeps_the_previous_output(mounts, corpus, tok):
    full = mounts.full(populate=lambda m: _copy_tok(tok, m / "tok"))
    before = tree_digest(full)
    assert_contract(run("train", corpus, *TRAIN, "--out", full / "tok", "--force"), PROG, full / "tok")
    assert tree_digest(full) == before


def test_train_spm_on_a_full_disk(mounts, corpus):
    """The spm backend and the Rust ``tokenizer.save`` ('Exception: No space left on device')."""
    full = mounts.full()
    before = tree_digest(full)
    r = run("train", corpus, "--vocab-size", 300, "--out", full / "tok", "-q")
    assert_contract(r, PROG, full / "tok")
    assert tree_digest(full) == before


def test_count_on_a_full_disk_keeps_the_previous_counts(mounts, corpus):
    def populate(m: Path) -> None:
        (m / "counts.tsv").write_text("old\t1\n", encoding="utf-8")

    full = mounts.full(populate=populate)
    before = tree_digest(full)
    assert_contract(run("count", corpus, "--out", full / "counts.tsv", "--force", "-q"), PROG, full / "counts.tsv")
    assert tree_digest(full) == before


# --- --force never destroys an input nor a folder that is not a biotok output -------------------
def test_force_never_replaces_the_corpus_folder(corpus):
    before = tree_digest(corpus.parent)
    r = run("train", corpus, *TRAIN, "--out", corpus.parent, "--force")
    assert_contract(r, PROG, corpus.parent)
    assert tree_digest(corpus.parent) == before


def test_force_never_replaces_the_corpus_file(corpus):
    before = tree_digest(corpus.parent)
    assert_contract(run("count", corpus, "--out", corpus, "--force", "-q"), PROG, corpus)
    assert tree_digest(corpus.parent) == before


def test_force_never_replaces_a_folder_that_is_not_a_biotok_output(tmp_path, corpus):
    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "chapter1.tex").write_text("\\section{Intro}\n", encoding="utf-8")
    before = tree_digest(mine)
    assert_contract(run("train", corpus, *TRAIN, "--out", mine, "--force"), PROG, mine)
    assert tree_digest(mine) == before


def test_force_never_replaces_a_report_input(tmp_path, tok, corpus):
    mine = tmp_path / "tok"
    _copy_tok(tok, mine)
    before = tree_digest(mine)
    r = run("report", mine, "--corpus", corpus, "--out", mine, "--force", "--no-progress")
    assert_contract(r, PROG, mine)
    assert tree_digest(mine) == before


def test_two_concurrent_runs_cannot_both_claim_the_same_output(tmp_path, sample_corpus):
    """Both pass the early check (training takes ~1 s, starting ~0.3 s); the rename-time check
    lets exactly one of them win."""
    out = tmp_path / "tok"
    procs = [
        subprocess.Popen([*cli_cmd(PROG), "train", str(sample_corpus), "--algo", "wordpiece", "--vocab-size", str(v),
                          "--workers", "1", "--out", str(out), "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for v in (500, 501)
    ]
    results = [(p, *p.communicate(timeout=120)) for p in procs]
    codes = sorted(p.returncode for p, _, _ in results)
    assert codes == [0, 2], [(p.returncode, err) for p, _, err in results]
    (winner,) = [i for i, (p, _, _) in enumerate(results) if p.returncode == 0]
    loser = results[1 - winner]
    assert "Traceback" not in loser[2]
    assert [l for l in loser[2].splitlines() if l.strip()][0].startswith("biotok: error: ")
    import json

    assert json.loads((out / "biotok.json").read_text())["vocab_size"] == (500, 501)[winner]
    assert leftovers(tmp_path, "tok") == []


# --- kills -------------------------------------------------------------------------------------
@pytest.fixture()
def big(tmp_path, sample_corpus) -> Path:
    """The sample corpus four times: long enough a run to be killed in the middle of it."""
    p = tmp_path / "big.txt"
    p.write_bytes(sample_corpus.read_bytes() * 4)
    return p


def _wait_for(pred, timeout: float = 60.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def _env(tmpdir: Path) -> dict:
    env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONUNBUFFERED="1")
    env.pop("BIOTOK_DEBUG", None)
    return env


def _counting(p: subprocess.Popen) -> bool:
    """True once the run has started its counting workers (the first pass over the corpus)."""
    import psutil

    try:
        return bool(psutil.Process(p.pid).children())
    except psutil.NoSuchProcess:
        return False


def _reader(stream, sink: list[str]) -> threading.Thread:
    t = threading.Thread(target=lambda: sink.extend(iter(lambda: stream.read(1), "")), daemon=True)
    t.start()
    return t


def _start_train(tmp_path: Path, corpus: list[str], out: Path, scratch: Path, stdin=None):
    p = subprocess.Popen(
        [*cli_cmd(PROG), "train", *corpus, "--algo", "wordpiece", "--vocab-size", "2000", "--workers", "2",
         "--out", str(out)],
        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(scratch),
        preexec_fn=_default_sigint,
    )
    err: list[str] = []
    _reader(p.stderr, err)
    return p, err


def _default_sigint() -> None:
    """The run gets Ctrl-C as a terminal user's command does: a test run started in the background
    (``pytest &``) ignores SIGINT, its children inherit that, and Python then installs no handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_killed_train_leaves_nothing_behind(tmp_path, big, sig):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "run" / "tok"
    p, err = _start_train(tmp_path, [str(big)], out, scratch)
    # the first pass over the corpus has begun
    assert _wait_for(lambda: _counting(p) or p.poll() is not None)
    assert p.poll() is None, "training ended before the signal: make the corpus bigger"
    p.send_signal(sig)
    p.wait(timeout=60)
    stderr = "".join(err)
    assert p.returncode != 0
    assert "Traceback" not in stderr, stderr
    assert not out.exists()
    assert leftovers(out.parent, "tok") == []
    assert sorted(os.listdir(scratch)) == []


def test_sigterm_during_sentencepiece_training_removes_its_scratch(tmp_path, sample_corpus):
    """SentencePiece trains from a counts file in $TMPDIR; SIGTERM (caught, turned into an
    exception) must remove it, even though the handler only runs once the C++ trainer returns."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "run" / "tok"
    p = subprocess.Popen([*cli_cmd(PROG), "train", str(sample_corpus), "--vocab-size", "3000", "--workers", "1",
                          "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=_env(scratch))
    err: list[str] = []
    _reader(p.stderr, err)
    assert _wait_for(lambda: bool(os.listdir(scratch)) or p.poll() is not None)
    assert p.poll() is None, "training ended before the signal"
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=120)
    assert p.returncode != 0
    assert "Traceback" not in "".join(err)
    assert sorted(os.listdir(scratch)) == []
    assert not out.exists() and leftovers(out.parent, "tok") == []


def test_killed_train_from_stdin_leaves_no_spool(tmp_path, sample_corpus):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "run" / "tok"
    p, err = _start_train(tmp_path, ["-"], out, scratch, stdin=subprocess.PIPE)
    data = sample_corpus.read_text(encoding="utf-8")
    written = {"n": 0}

    def feed() -> None:
        try:
            for _ in range(50):  # never closed: the run is still reading stdin when killed
                p.stdin.write(data)
                written["n"] += len(data)
        except (BrokenPipeError, OSError, ValueError):
            pass

    threading.Thread(target=feed, daemon=True).start()
    # well past the pipe buffer: the run is reading (and, if it spools, writing its copy)
    assert _wait_for(lambda: written["n"] > 2 * len(data) or p.poll() is not None)
    assert p.poll() is None
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    assert p.returncode != 0
    assert "Traceback" not in "".join(err)
    assert not out.exists()
    assert leftovers(out.parent, "tok") == []
    assert sorted(os.listdir(scratch)) == []


def test_sigkill_during_training_leaves_nothing_in_tmpdir(tmp_path, big):
    """SIGKILL cannot be caught: while the corpus is read and the vocabulary trained, a run keeps
    nothing on disk (no spool, no sibling), so there is nothing to leave behind; its counting
    workers notice their parent is gone and exit."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "run" / "tok"
    p, err = _start_train(tmp_path, [str(big)], out, scratch)
    assert _wait_for(lambda: _counting(p) or p.poll() is not None)
    assert p.poll() is None
    import psutil

    workers = psutil.Process(p.pid).children(recursive=True)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    assert sorted(os.listdir(scratch)) == []
    assert not out.exists() and leftovers(out.parent, "tok") == []
    _, alive = psutil.wait_procs(workers, timeout=30)  # orphaned counting workers exit too
    assert alive == [], alive


_KILLED_WHILE_WRITING = """
import os, signal, sys
from biotok.output import atomic_directory
with atomic_directory(sys.argv[1]) as tmp:
    (tmp / "half-written.json").write_text("{")
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_after_sigkill_while_writing_the_next_run_removes_the_stale_sibling(tmp_path, corpus):
    """A run killed (SIGKILL) while it writes its output leaves its hidden sibling; the next run
    writing the same --out removes the siblings of runs that are gone, and succeeds."""
    out = tmp_path / "run" / "tok"
    out.parent.mkdir()
    killed = subprocess.run([sys.executable, "-c", _KILLED_WHILE_WRITING, str(out)], capture_output=True,
                            env=_env(tmp_path))
    assert killed.returncode == -signal.SIGKILL
    assert len(leftovers(out.parent, "tok")) == 1 and not out.exists()
    r = run("train", corpus, *TRAIN, "--out", out)
    assert r.exit_code == 0, r.output
    assert leftovers(out.parent, "tok") == [] and (out / "biotok.json").is_file()


# --- accepted when it should not be, or said badly ---------------------------------------------
def test_tokenizers_dir_that_does_not_exist(tmp_path, tok):
    missing = tmp_path / "nonexistent"
    assert_contract(run("compare", tok, "--tokenizers-dir", missing), PROG, missing)


def test_report_tokenizers_dir_that_does_not_exist(tmp_path, tok, corpus):
    missing = tmp_path / "nonexistent"
    r = run("report", tok, "--corpus", corpus, "--out", tmp_path / "rep", "--tokenizers-dir", missing)
    assert_contract(r, PROG, missing)
    assert not (tmp_path / "rep").exists()


def _spm_log(stderr: str) -> list[str]:
    """SentencePiece's C++ (absl) log lines: 'I0000 ... trainer_interface.cc:409] ...'."""
    return [l for l in stderr.splitlines() if re.search(r"\w\.cc[:(]\d+", l) or "absl::" in l]


@pytest.mark.parametrize("size", [10, 100000], ids=["too-small", "too-large"])
def test_spm_vocab_size_error_is_one_line(tmp_path, corpus, size):
    """SentencePiece's C++ log (on fd 2) must not bury the one error line."""
    out = tmp_path / "tok"
    r = subprocess.run([*cli_cmd(PROG), "train", str(corpus), "--vocab-size", str(size), "--workers", "1",
                        "--out", str(out)],
                       capture_output=True, text=True, env=_env(tmp_path), timeout=120)
    assert_proc_contract(r, PROG, "--vocab-size")
    assert not out.exists()


def test_spm_is_quiet_by_default_and_speaks_with_verbose(tmp_path, corpus):
    quiet = subprocess.run([*cli_cmd(PROG), "train", str(corpus), "--vocab-size", "400", "--workers", "1", "--out",
                            str(tmp_path / "a")], capture_output=True, text=True, env=_env(tmp_path), timeout=120)
    assert quiet.returncode == 0, quiet.stderr
    assert _spm_log(quiet.stderr) == [], quiet.stderr[:2000]
    loud = subprocess.run([*cli_cmd(PROG), "train", str(corpus), "--vocab-size", "400", "--workers", "1", "--verbose", "--out",
                           str(tmp_path / "b")], capture_output=True, text=True, env=_env(tmp_path), timeout=120)
    assert loud.returncode == 0, loud.stderr
    assert _spm_log(loud.stderr), loud.stderr[:2000]


def test_empty_stdin_names_stdin_not_a_temp_file(tmp_path):
    out = tmp_path / "tok"
    line = assert_contract(run("train", "-", *TRAIN, "--out", out, input=""), PROG, "<stdin>")
    assert "stdin.txt" not in line and "biotok-" not in line and os.sep + "tmp" not in line
    assert not out.exists()


def test_outputs_get_the_users_umask_not_private_modes(tmp_path, corpus, tok):
    old = os.umask(0o022)
    try:
        r = run("train", corpus, *TRAIN, "--out", tmp_path / "tok")
        assert r.exit_code == 0, r.output
        r = run("report", tok, "--corpus", corpus, "--out", tmp_path / "rep", "--no-progress")
        assert r.exit_code == 0, r.output
        r = run("count", corpus, "--out", tmp_path / "counts.tsv", "-q")
        assert r.exit_code == 0, r.output
    finally:
        os.umask(old)
    for d in (tmp_path / "tok", tmp_path / "rep"):
        for rel, mode in modes(d).items():
            want = "0o755" if (d / rel).is_dir() else "0o644"
            assert mode == want, (d, rel, mode)
    assert modes(tmp_path / "counts.tsv")["."] == "0o644"


# --- issue 24: the output policy, machine-sized numbers, click's own usage errors ------------------
def test_sweep_force_never_replaces_a_folder_that_is_not_a_sweep(tmp_path, corpus):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    before = tree_digest(mine)
    r = run("sweep", corpus, "--sizes", "200,300", "--algo", "wordpiece", "--out", mine, "--force", "--no-progress")
    assert_contract(r, PROG, mine, "not a biotok output")
    assert tree_digest(mine) == before and leftovers(tmp_path, "mine") == []


def test_sweep_twice_gives_the_same_files(tmp_path, corpus):
    outs = []
    for _ in range(2):
        r = run("sweep", corpus, "--sizes", "300,400", "--algo", "wordpiece", "--out", tmp_path / "s", "--force",
                "--no-progress")
        assert r.exit_code == 0, r.output
        outs.append(tree_digest(tmp_path / "s"))
        meta = json.loads((tmp_path / "s" / "tokenizers" / "wordpiece-300" / "biotok.json").read_text("utf-8"))
        assert "biotok-sweep-" not in json.dumps(meta["corpus"])  # no temporary folder in the provenance
    differ = {k for k in outs[0] if outs[0][k] != outs[1].get(k)}
    assert differ <= {f"tokenizers/wordpiece-{n}/biotok.json" for n in (300, 400)}  # their training_seconds


def test_absurd_worker_count_is_refused_before_any_process_starts(tmp_path, corpus):
    r = run("train", corpus, "--algo", "wordpiece", "--vocab-size", 400, "--workers", 100000, "--out",
            tmp_path / "t", "-q")
    assert_contract(r, PROG, "100000", "--workers")
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("args,named", [
    (("train",), "CORPUS"),
    (("train", "c.txt", "--vocab-size", "abc"), "--vocab-size"),
    (("train", "c.txt", "--vocab-size", "0"), "--vocab-size"),
    (("trainn",), "trainn"),
    (("compare", "bert", "--corpus"), "--corpus"),
])
def test_click_usage_errors_are_one_line(args, named):
    assert_contract(run(*args), PROG, named)


# --- issue 24, numbers at the door: every numeric option has a range (biotok.config.check_range) -----
@pytest.mark.parametrize("args,named", [
    (("--algo", "wordpiece", "--vocab-size", 3000000000), "--vocab-size 3000000000"),
    (("--algo", "unigram", "--vocab-size", 2**31), "--vocab-size"),
    (("--algo", "wordpiece", "--vocab-size", 400, "--seed", -1), "--seed -1"),
    (("--algo", "unigram", "--vocab-size", 400, "--seed", 2**32), "--seed 4294967296"),
    (("--algo", "unigram", "--vocab-size", 400, "--seed", 2**70), "--seed"),
    (("--algo", "bpe", "--vocab-size", 400, "--min-frequency", 10**20), "--min-frequency"),
    (("--algo", "unigram", "--vocab-size", 400, "--min-frequency", 3000000000), "--min-frequency 3000000000"),
], ids=["vocab-3e9", "vocab-int32", "seed-neg", "seed-2^32", "seed-2^70", "min-freq-2^66", "min-freq-3e9"])
def test_train_numbers_beyond_what_the_libraries_take(tmp_path, corpus, args, named):
    out = tmp_path / "tok"
    before = tree_digest(corpus.parent)
    assert_contract(run("train", corpus, *args, "--workers", 1, "--out", out, "-q"), PROG, named)
    assert not out.exists() and leftovers(tmp_path, "tok") == [] and tree_digest(corpus.parent) == before


def test_sweep_size_over_int32(tmp_path, corpus):
    out = tmp_path / "s"
    r = run("sweep", corpus, "--sizes", "300,3000000000", "--algo", "wordpiece", "--out", out, "--no-progress")
    assert_contract(r, PROG, "--sizes 3000000000")
    assert not out.exists() and leftovers(tmp_path, "s") == []


@pytest.mark.parametrize("args,named", [
    (("--epochs", "inf"), "--epochs"),
    (("--tokens-per-second", "inf"), "--tokens-per-second"),
    (("--tokens-per-second", "nan"), "--tokens-per-second"),
    (("--seq-len", 2**40), "--seq-len"),
], ids=["epochs-inf", "tps-inf", "tps-nan", "seq-len-2^40"])
def test_cost_numbers_must_be_finite_and_in_range(tok, corpus, args, named):
    assert_contract(run("cost", tok, tok, "--corpus", corpus, "--corpus-size", "1GB", *args), PROG, named)


def test_every_config_number_is_checked_by_the_shared_helper():
    """The Python API refuses what the CLI refuses: one helper, every config."""
    from biotok.config import CostConfig, SweepConfig, TrainConfig
    from biotok.errors import ConfigError

    for make in (lambda: TrainConfig(vocab_size=3_000_000_000), lambda: TrainConfig(seed=-1),
                 lambda: SweepConfig(sizes=(300, 2**40)), lambda: CostConfig(epochs=float("inf")),
                 lambda: CostConfig(tokens_per_second=float("inf")), lambda: CostConfig(seed=2**64)):
        with pytest.raises(ConfigError):
            make()


# --- issue 24, text the libraries refuse: read and refused by biotok, naming the file and line ------
def test_lone_surrogate_in_a_jsonl_escape(tmp_path):
    """json.loads turns '\\ud800' into a lone surrogate, which UTF-8 cannot encode."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "ok"}\n{"text": "bad \\ud800 here"}\n', encoding="utf-8")
    before = tree_digest(corpus)
    for cmd in (("count", corpus, "--out", tmp_path / "counts.tsv", "-q"),
                ("train", corpus, *TRAIN, "--out", tmp_path / "tok")):
        assert_contract(run(*cmd), PROG, f"{corpus}:2", "surrogate")
    assert tree_digest(corpus) == before and sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def test_lone_surrogate_given_to_the_python_api(tok):
    from biotok.errors import CorpusError
    from biotok.formats import load

    t = load(tok)
    with pytest.raises(CorpusError, match="surrogate U\\+D800"):
        t.encode("bad \ud800")
    with pytest.raises(CorpusError, match="text 1 holds a lone surrogate"):
        t.encode_batch(["ok", "bad \ud800"])


def test_a_valid_json_line_over_one_mib_is_read_whole(tmp_path):
    """The long-line cut applies to the text field, never to the JSON record."""
    corpus = tmp_path / "c.jsonl"
    long = "Le patient présente une fièvre. " * 40_000  # 1.3 MB of text in one record
    corpus.write_text(json.dumps({"text": "court"}) + "\n" + json.dumps({"id": 7, "text": long}) + "\n",
                      encoding="utf-8")
    r = run("count", corpus, "--out", tmp_path / "counts.tsv", "-q")
    assert r.exit_code == 0, r.output
    counts = dict(l.split("\t") for l in (tmp_path / "counts.tsv").read_text("utf-8").splitlines())
    assert counts["fièvre"] == "40000" and counts["court"] == "1"


@pytest.mark.parametrize("count", ["٣", "²", "3000000000"], ids=["arabic-indic", "superscript", "3e9"])
def test_counts_file_numbers(tmp_path, count):
    """A Unicode digit (int() reads '٣', refuses '²') or a count the backends cannot take
    (SentencePiece's int32: std::bad_alloc; tokenizers feeds every occurrence: minutes)."""
    counts = tmp_path / "counts.tsv"
    counts.write_text(f"patient\t{count}\nle\t5\n", encoding="utf-8")
    out = tmp_path / "tok"
    r = run("train", "--from-counts", counts, "--algo", "bpe", "--vocab-size", 100, "--out", out, "-q")
    assert_contract(r, PROG, f"{counts}:1")
    assert not out.exists() and leftovers(tmp_path, "tok") == []


def test_counts_of_shards_adding_up_beyond_int32(tmp_path):
    shards = [tmp_path / "s1.tsv", tmp_path / "s2.tsv"]
    for s in shards:
        s.write_text("patient\t2000000000\n", encoding="utf-8")
    out = tmp_path / "tok"
    r = run("train", "--from-counts", *shards, "--algo", "bpe", "--vocab-size", 100, "--out", out, "-q")
    assert_contract(r, PROG, f"{shards[1]}:1", "add up to 4,000,000,000")
    assert not out.exists()


@pytest.mark.parametrize("record", ['"lower"', '["lowercase"]', "null"], ids=["string", "list", "null"])
def test_counts_record_whose_normalization_is_not_an_object(tmp_path, corpus, record):
    """null passed for 'default' normalization and the error blamed the training's options."""
    counts = tmp_path / "counts.tsv"
    assert run("count", corpus, "--out", counts, "-q").exit_code == 0
    meta = json.loads((tmp_path / "counts.tsv.json").read_text("utf-8"))
    (tmp_path / "counts.tsv.json").write_text(json.dumps({**meta, "normalize": json.loads(record)}), encoding="utf-8")
    r = run("train", "--from-counts", counts, *TRAIN, "--out", tmp_path / "tok")
    assert_contract(r, PROG, "counts.tsv.json", "'normalize'")


# --- issue 24, paths: symbolic links that cannot be followed ----------------------------------------
@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_symlink_loop_or_dangling_link_as_corpus(tmp_path, kind):
    a = tmp_path / "a.txt"
    if kind == "loop":
        b = tmp_path / "b.txt"
        a.symlink_to(b)
        b.symlink_to(a)
    else:
        a.symlink_to(tmp_path / "nowhere.txt")
    before = tree_digest(tmp_path)
    for cmd in (("count", a, "--out", tmp_path / "counts.tsv", "-q"), ("train", a, *TRAIN, "--out", tmp_path / "tok"),
                ("train", "--from-counts", a, *TRAIN, "--out", tmp_path / "tok")):
        assert_contract(run(*cmd), PROG, a)
    assert tree_digest(tmp_path) == before


# --- issue 24, errors that name the file they are about ------------------------------------------------
@pytest.mark.parametrize("content", ["", "\n  \n\n"], ids=["empty", "blank-lines"])
def test_an_empty_corpus_is_named(tmp_path, tok, content):
    empty = tmp_path / "empty.txt"
    empty.write_text(content, encoding="utf-8")
    cases = [
        ("sweep", empty, "--sizes", "200,300", "--algo", "wordpiece", "--out", tmp_path / "s", "--no-progress"),
        ("count", empty, "--out", tmp_path / "counts.tsv", "-q"),
        ("cost", tok, "--corpus", empty, "--corpus-size", "1GB"),
    ]
    for args in cases:
        assert_contract(run(*args), PROG, empty)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt"]


def test_sweep_with_an_empty_eval_corpus_names_it(tmp_path, corpus):
    blank = tmp_path / "blank.txt"
    blank.write_text("\n\n", encoding="utf-8")
    r = run("sweep", corpus, "--eval-corpus", blank, "--sizes", "200,300", "--algo", "wordpiece", "--out",
            tmp_path / "s", "--no-progress")
    assert_contract(r, PROG, blank)
    assert not (tmp_path / "s").exists() and leftovers(tmp_path, "s") == []


@pytest.mark.parametrize("option", ["--sentences", "--entities"])
def test_report_input_with_no_usable_content_is_one_line(tmp_path, tok, corpus, option):
    """--entities logged its 'entities: 0 mentions ...' line before the error (two lines)."""
    blank = tmp_path / "blank.txt"
    blank.write_text("\n   \n\n", encoding="utf-8")
    out = tmp_path / "rep"
    r = run("report", tok, "--corpus", corpus, option, blank, "--out", out, "--no-progress")
    assert_contract(r, PROG, blank)
    assert not out.exists() and leftovers(tmp_path, "rep") == []


def test_cost_corpus_size_beyond_any_disk(tok, corpus):
    r = run("cost", tok, "--corpus", corpus, "--corpus-size", "100000000000000000000000GB")
    assert_contract(r, PROG, "100000000000000000000000GB")


# --- issue 24, what a page shows is capped, whatever the inputs hold -----------------------------------
def test_report_page_of_a_two_megabyte_sentence_stays_small(tmp_path, tok, corpus):
    """One 2 MB line given with --sentences made a 69 MB report.html."""
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("Une phrase.\n" + "Le patient présente une fièvre élevée. " * 52_000 + "\n", encoding="utf-8")
    r = run("report", tok, "--corpus", corpus, "--sentences", sentences, "--out", tmp_path / "rep", "--no-progress")
    assert r.exit_code == 0, r.output
    page = (tmp_path / "rep" / "report.html").read_text("utf-8")
    assert len(page) < 2_000_000, len(page)
    assert re.search(r"first \d{3} of 2,027,999 characters", page)  # the line, stripped, cut at a space


def test_a_section_draws_at_most_its_share_of_texts(tok):
    from biotok.formats import load
    from biotok.page import MAX_SHOWN_CHARS, MAX_SHOWN_TEXTS, segmented_texts, shown_note

    texts = [f"phrase {i}" for i in range(MAX_SHOWN_TEXTS + 50)] + ["mot " * 2000]
    drawn = segmented_texts([load(tok)], texts)
    assert len(drawn) == MAX_SHOWN_TEXTS and all(len(d.text) <= MAX_SHOWN_CHARS for d in drawn)
    assert shown_note(len(texts)) == f" The first {MAX_SHOWN_TEXTS:,} of {len(texts):,} are drawn."
    assert segmented_texts([load(tok)], ["mot " * 2000])[0].label.startswith("first ")


# --- issue 24, figures: PNG names only --------------------------------------------------------------
@pytest.mark.parametrize("name", ["overlap.xyz", "overlap.svg", "overlap"])
def test_compare_plot_with_a_name_that_is_not_png(tmp_path, tok, name):
    """It wrote PNG bytes under any name (overlap.svg held a PNG)."""
    out = tmp_path / name
    assert_contract(run("compare", tok, tok, "--plot", out), PROG, out, ".png")
    assert not out.exists() and leftovers(tmp_path, name) == []


# --- issue 24, SIGTERM stops a native trainer's feed ------------------------------------------------
def test_sigterm_while_the_tokenizers_trainer_is_fed_stops_at_once(tmp_path):
    """The tokenizers trainers pull their input from Rust threads, where Python runs no signal
    handler: a BPE run signalled at 4 s exited at 38 s. Counts of 2e9 feed it for many minutes."""
    counts = tmp_path / "counts.tsv"
    counts.write_text("patient\t2000000000\n", encoding="utf-8")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "run" / "tok"
    p = subprocess.Popen([*cli_cmd(PROG), "train", "--from-counts", str(counts), "--algo", "bpe", "--vocab-size",
                          "100", "--out", str(out), "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=_env(scratch))
    err: list[str] = []
    _reader(p.stderr, err)
    assert _wait_for(lambda: "warning: no counts.tsv.json" in "".join(err) or p.poll() is not None)
    time.sleep(1.5)  # inside train_from_iterator
    assert p.poll() is None
    sent = time.monotonic()
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    assert time.monotonic() - sent < 10
    assert p.returncode == 143, "".join(err)
    assert "Traceback" not in "".join(err)
    assert not out.exists() and leftovers(out.parent, "tok") == [] and sorted(os.listdir(scratch)) == []


# --- issue 33: a tokenizer's sizes checked at the door ----------------------------------------------------
@pytest.mark.parametrize("damage", ["id-2e9", "nested-50000"])
@pytest.mark.parametrize("cmd", ["compare", "report"])
def test_tokenizer_sizes_are_checked_at_the_door(tmp_path, tok, corpus, cmd, damage):
    """An id of 2,000,000,000: numpy's _ArrayMemoryError (14.9 GiB); 50,000 levels: RecursionError."""
    bad = tmp_path / "bad"
    _copy_tok(tok, bad)
    if damage == "id-2e9":
        d = json.loads((bad / "tokenizer.json").read_text(encoding="utf-8"))
        d["model"]["vocab"][list(d["model"]["vocab"])[-1]] = 2_000_000_000
        (bad / "tokenizer.json").write_text(json.dumps(d), encoding="utf-8")
    else:
        (bad / "tokenizer.json").write_text("[" * 50_000 + "]" * 50_000, encoding="utf-8")
    out = tmp_path / "rep"
    extra = ("--out", out, "--no-progress") if cmd == "report" else ()
    line = assert_contract(run(cmd, bad, "--corpus", corpus, *extra), PROG, bad)
    assert ("2,000,000,000" in line) if damage == "id-2e9" else ("nested too deeply" in line)
    assert not out.exists()


# --- issue 33, the smaller ones ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["missing", "a-file"])
def test_shared_data_that_is_not_a_folder_is_named(tmp_path, corpus, monkeypatch, kind):
    """The alias lookup failed under '/nope/tokenizers/...' without saying the variable names nothing."""
    where = tmp_path / "nope"
    if kind == "a-file":
        where.write_text("x")
    monkeypatch.setenv("BIOTOK_SHARED_DATA", str(where))
    monkeypatch.delenv("BIOTOK_TOKENIZERS_DIR", raising=False)
    assert_contract(run("compare", "camemberta", "--corpus", corpus), PROG, f"BIOTOK_SHARED_DATA={where}")


def test_plot_in_a_folder_that_is_a_file(tmp_path, tok, corpus):
    """'folder afile does not exist' when afile is a file."""
    afile = tmp_path / "afile"
    afile.write_text("keep")
    r = run("compare", tok, "--corpus", corpus, "--plot", afile / "x.png")
    assert_contract(r, PROG, afile, "is a file, not a folder")
    assert afile.read_text() == "keep"


def test_counts_file_with_windows_line_endings(tmp_path):
    """'c.tsv:1: expected word<TAB>count ..., got 'le\\t5'': the carriage return was not named."""
    words = {"le": 50, "patient": 40, "présente": 30, "une": 30, "fièvre": 20, "élevée": 10}
    lf, crlf = tmp_path / "lf.tsv", tmp_path / "crlf.tsv"
    lf.write_bytes("".join(f"{w}\t{n}\n" for w, n in words.items()).encode())
    crlf.write_bytes("".join(f"{w}\t{n}\r\n" for w, n in words.items()).encode())
    for f in (lf, crlf):
        r = run("train", "--from-counts", f, "--algo", "wordpiece", "--vocab-size", 50, "--out", tmp_path / f.stem,
                "-q")
        assert r.exit_code == 0, r.output
    assert (tmp_path / "crlf" / "tokenizer.json").read_bytes() == (tmp_path / "lf" / "tokenizer.json").read_bytes()


def test_sweep_help_mentions_the_zipf_fit():
    r = run("sweep", "--help")
    assert r.exit_code == 0 and "Zipf" in r.output
