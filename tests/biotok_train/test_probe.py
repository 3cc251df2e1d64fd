"""The causal-LM probe: two tokenizers trained on the sample corpus, a toy GPT-2 each, scored in
bits per character against their unigram floors; deterministic, resumable, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLE

TOY = dict(steps=300, batch_size=8, seq_len=64, hidden=64, heads=2, layers=2, lr=3e-3, n_resamples=300)


@pytest.fixture(scope="module")
def texts(tmp_path_factory) -> tuple[Path, Path]:
    """Training text (the first 300 documents of the sample) and held-out text (30 others)."""
    d = tmp_path_factory.mktemp("probe-text")
    lines = [l for l in SAMPLE.read_text(encoding="utf-8").splitlines() if l.strip()]
    (d / "train.txt").write_text("\n".join(lines[:300]) + "\n", encoding="utf-8")
    (d / "held.txt").write_text("\n".join(lines[-30:]) + "\n", encoding="utf-8")
    return d / "train.txt", d / "held.txt"


@pytest.fixture(scope="module")
def toks(tmp_path_factory) -> tuple[Path, Path]:
    """A lowercasing Unigram and a cased BPE, 1,000 pieces each, trained on the sample corpus."""
    from biotok import train_tokenizer
    from biotok.config import NormalizeConfig, TrainConfig

    d = tmp_path_factory.mktemp("probe-toks")
    train_tokenizer([SAMPLE], TrainConfig(algo="unigram", vocab_size=1000, normalize=NormalizeConfig(lowercase=True)),
                    d / "uni", workers=1)
    train_tokenizer([SAMPLE], TrainConfig(algo="bpe", vocab_size=1000), d / "bpe", workers=1)
    return d / "uni", d / "bpe"


def _cfg(toks, texts, **kw):
    from biotok_train.config import ProbeConfig

    return ProbeConfig(tokenizers=tuple(map(str, toks)), corpus=(str(texts[0]),), heldout=(str(texts[1]),),
                       **{**TOY, **kw})


def test_learned_models_beat_their_unigram_floor_deterministically(toks, texts, tmp_path):
    from biotok_train.probe import run_probe

    r = run_probe(_cfg(toks, texts), tmp_path / "a", progress=False)
    assert [a["name"] for a in r.arms] == ["uni", "bpe"]
    for a in r.arms:
        assert a["bits_per_char"]["mean"] < a["unigram_floor_bits_per_char"]
        assert a["versus_floor"]["verdict"] == "better" and a["versus_floor"]["high"] < 0
        assert 0 < a["pieces_per_char"] < 1 and a["train_tokens"] == 300 * 8 * 64
    c = r.comparisons[0]
    assert (c["reference_arm"], c["candidate_arm"]) == ("uni", "bpe") and c["low"] <= c["difference"] <= c["high"]
    # bits/char is the summed NLL over the held-out characters
    held_chars = sum(len(l) for l in texts[1].read_text(encoding="utf-8").splitlines())
    assert r.setup["heldout_chars"] == held_chars
    run0 = json.loads(next((tmp_path / "a" / "runs").glob("uni-*/seed0.json")).read_text())
    assert r.arms[0]["bits_per_char"]["mean"] == pytest.approx(sum(run0["doc_bits"]) / held_chars)
    # case is discarded by one arm only: the report says the comparison is not like for like
    assert any("Not like for like" in n for n in r.notes)
    md = (tmp_path / "a" / "probe.md").read_text()
    assert "Not like for like" in md and "unigram floor" in md and "Versions:" in md

    # the same inputs and seeds give the same bytes (a fresh folder: every model trained again)
    run_probe(_cfg(toks, texts), tmp_path / "b", progress=False)
    a, b = tmp_path / "a", tmp_path / "b"
    assert (a / "probe.png").read_bytes() == (b / "probe.png").read_bytes()
    ja, jb = (json.loads((d / "probe.json").read_text()) for d in (a, b))
    assert ja.pop("command").replace(str(a), "OUT") == jb.pop("command").replace(str(b), "OUT")
    assert ja == jb
    assert (a / "probe.md").read_text().replace(str(a), "OUT") == (b / "probe.md").read_text().replace(str(b), "OUT")

    # a rerun resumes: the cached runs are reused, not trained again
    runs = sorted((a / "runs").rglob("seed*.json"))
    stamps = [p.stat().st_mtime_ns for p in runs]
    before = (a / "probe.json").read_bytes()
    run_probe(_cfg(toks, texts), a, progress=False)
    assert [p.stat().st_mtime_ns for p in runs] == stamps
    assert (a / "probe.json").read_bytes() == before


def test_fair_mode_and_errors_on_the_command_line(toks, texts, tmp_path):
    from biotok_train.cli import main

    base = [str(toks[0]), str(toks[1]), "--corpus", str(texts[0]), "--heldout", str(texts[1]),
            "--steps", "20", "--batch-size", "8", "--seq-len", "64", "--hidden", "32", "--n-resamples", "100"]
    res = CliRunner().invoke(main, ["probe", *base, "--fair", "--seeds", "0", "1", "--out", str(tmp_path / "f"), "-q"])
    assert res.exit_code == 0, res.output
    assert "bits/char" in res.output
    data = json.loads((tmp_path / "f" / "probe.json").read_text())
    assert data["setup"]["text"] == "fair: lowercases" and data["setup"]["seeds"] == [0, 1]
    assert not any("Not like for like" in n for n in data["notes"])
    assert "--fair" in data["command"] and "--seeds 0 1" in data["command"]
    # fair mode scores the lowercased held-out text: the characters are the same here
    assert data["setup"]["heldout_chars"] == sum(len(l) for l in texts[1].read_text(encoding="utf-8").splitlines())
    assert len(data["arms"][0]["bits_per_char"]["values"]) == 2
    assert {p.name for p in (tmp_path / "f").iterdir()} >= {"probe.md", "probe.json", "probe.png", "timings.json"}

    # a changed recipe in the same folder: refused without --force, replaced with it
    res = CliRunner().invoke(main, ["probe", *base, "--lr", "1e-2", "--out", str(tmp_path / "f")])
    assert res.exit_code == 2 and "another recipe" in res.output and len(res.output.strip().splitlines()) == 1
    res = CliRunner().invoke(main, ["probe", *base, "--lr", "1e-2", "--out", str(tmp_path / "f"), "--force", "-q"])
    assert res.exit_code == 0, res.output


def test_threads_pins_torchs_threads_while_training_and_leaves_the_recipe_alone(toks, texts, tmp_path, monkeypatch):
    """--threads N: training runs on N torch threads, the count is restored after, and a cached run
    is reused at any count (the thread count is how the sums are split, not what is computed)."""
    import torch

    from biotok_train.cli import main
    from biotok_train.probe import run as R

    seen, real = [], R._run_one
    monkeypatch.setattr(R, "_run_one", lambda *a, **k: (seen.append(torch.get_num_threads()), real(*a, **k))[1])
    before = torch.get_num_threads()
    base = [str(toks[0]), "--corpus", str(texts[0]), "--heldout", str(texts[1]), "--steps", "10", "--batch-size", "4",
            "--seq-len", "32", "--hidden", "32", "--n-resamples", "50", "--out", str(tmp_path / "t"), "-q"]
    res = CliRunner().invoke(main, ["probe", *base, "--threads", "1"])
    assert res.exit_code == 0, res.output
    assert seen == [1] and torch.get_num_threads() == before
    assert "--threads 1 " in json.loads((tmp_path / "t" / "probe.json").read_text())["command"]
    runs = sorted((tmp_path / "t" / "runs").rglob("seed*.json"))
    stamps = [q.stat().st_mtime_ns for q in runs]
    res = CliRunner().invoke(main, ["probe", *base, "--threads", "2"])  # the same recipe: resumed, nothing trained
    assert res.exit_code == 0 and "another recipe" not in res.output, res.output
    assert seen == [1, 2] and [q.stat().st_mtime_ns for q in runs] == stamps
    res = CliRunner().invoke(main, ["probe", *base, "--threads", "-1"])
    assert res.exit_code == 2 and "threads" in res.output and len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize("extra, message", [
    (["--heldout", "missing.txt"], "missing.txt"),
    (["--heldout", "HELD", "--steps", "5", "--tokens", "100"], "--steps or --tokens"),
    (["--heldout", "HELD", "--seq-len", "4"], "--seq-len"),
])
def test_bad_input_is_one_line_and_exit_2(toks, texts, tmp_path, extra, message):
    from biotok_train.cli import main

    extra = [str(texts[1]) if e == "HELD" else e for e in extra]
    res = CliRunner().invoke(main, ["probe", str(toks[0]), "--corpus", str(texts[0]), *extra,
                                    "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert message in res.output and len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_not_a_probe_folder_is_refused(toks, texts, tmp_path):
    from biotok_train.cli import main

    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "notes.txt").write_text("mine")
    res = CliRunner().invoke(main, ["probe", str(toks[0]), "--corpus", str(texts[0]), "--heldout", str(texts[1]),
                                    "--out", str(tmp_path / "o"), "--force"])
    assert res.exit_code == 2 and "not a probe output" in res.output
    assert (tmp_path / "o" / "notes.txt").read_text() == "mine"


def test_normalization_and_fair_transform(toks):
    from biotok_train.probe import data as D
    from biotok_train.probe.run import load_tokenizer

    uni, bpe = (D.normalization(load_tokenizer(str(t))) for t in toks)
    assert uni.lowercases and not bpe.lowercases and not bpe.strips_accents
    how = D.fair_transform([uni, bpe])
    assert D.transform("Échographie", how) == "échographie"
    assert D.transform("Échographie", D.Normalization(True, True)) == "echographie"
    # pieces that decode back to the normalized text: all of them for this BPE; WordPiece-like
    # losses (spacing, characters behind the unknown token) would show below 1
    bpe_tok = load_tokenizer(str(toks[1]))
    docs = [l for l in SAMPLE.read_text(encoding="utf-8").splitlines() if l.strip()][:20]
    assert D.round_trip_share(bpe_tok, docs, D.encode_documents(bpe_tok, docs)) == 1.0
    assert D.round_trip_share(bpe_tok, ["x y"], [D.encode_documents(bpe_tok, ["x"])[0]]) == 0.0


def test_sliding_windows_score_every_piece_once():
    from biotok_train.probe.model import windows

    for n, length in ((1, 8), (2, 8), (8, 8), (9, 8), (30, 8), (31, 5)):
        scored = []
        for begin, end, first in windows(n, length):
            assert end - begin <= length and begin < first <= end
            scored.extend(range(first, end))
        assert scored == list(range(1, n))


def test_published_readme_from_the_published_probe_json():
    """probe.report.published_readme rebuilds docs/results/probe-fr/README.md from its own probe.json files."""
    import json
    from pathlib import Path

    from biotok_train.probe.report import published_readme

    pub = Path(__file__).resolve().parents[2] / "docs" / "results" / "probe-fr"
    results = {m: json.loads((pub / m / "probe.json").read_text(encoding="utf-8")) for m in ("raw", "fair")}
    timings = {m: json.loads((pub / m / "timings.json").read_text(encoding="utf-8")) for m in ("raw", "fair")}
    published = (pub / "README.md").read_text(encoding="utf-8")
    head, rest = published.split("## Setup\n\n", 1)
    setup = [line for line in rest.split("\n- Model:", 1)[0].splitlines() if line]
    command = published.split("```bash\n", 1)[1].split("\n", 1)[0]
    text = published_readme(results, timings, title=head.splitlines()[0][2:], command=command, setup=setup)
    assert text == published
    one = published_readme({"fair": results["fair"]}, {"fair": timings["fair"]}, title="T", command="c", setup=[])
    assert "`--modes fair raw` adds it" in one and "## Raw against fair" not in one


def _published(tmp_path: Path) -> Path:
    """A copy of docs/results/probe-fr/ whose raw/timings.json also holds a run of another seed."""
    import shutil

    pub = Path(__file__).resolve().parents[2] / "docs" / "results" / "probe-fr"
    dest = tmp_path / "pub"
    shutil.copytree(pub, dest)
    runs = json.loads((dest / "raw" / "timings.json").read_text(encoding="utf-8"))
    runs["BPE-32k/seed7"] = {"train_wall_s": 1e6, "train_cpu_s": 1e6, "eval_wall_s": 0.0, "eval_cpu_s": 0.0}
    (dest / "raw" / "timings.json").write_text(json.dumps(runs), encoding="utf-8")
    return dest


def test_read_published_counts_only_the_reports_runs(tmp_path):
    from biotok_train.probe.report import read_published

    results, timings = read_published(_published(tmp_path))
    assert list(results) == ["raw", "fair"] and results["fair"]["setup"]["seeds"] == [0, 1, 2]
    assert "BPE-32k/seed7" not in timings["raw"] and len(timings["raw"]) == 5 and len(timings["fair"]) == 15
    assert read_published(tmp_path / "pub", ("fair",))[0].keys() == {"fair"}
    assert read_published(tmp_path) == ({}, {})  # no mode folder: nothing


def test_publish_copies_each_mode_and_writes_the_readme(tmp_path):
    from biotok_train.probe.report import PUBLISHED_FILES, publish, read_published, setup_bullets

    src = _published(tmp_path)
    results, _ = read_published(src)
    bullets = setup_bullets(results, text="some text", vocabularies="two of them.")
    assert bullets == ["- Text: some text: 1,368 training documents (3,058,532 characters), 152 held-out documents "
                       "(339,686 characters).", "- Vocabularies: two of them."]
    dest = tmp_path / "out"
    assert publish({"fair": src / "fair"}, dest, "# README\n") == dest / "README.md"
    assert sorted(p.name for p in (dest / "fair").iterdir()) == sorted(PUBLISHED_FILES)
    assert (dest / "fair" / "probe.png").read_bytes() == (src / "fair" / "probe.png").read_bytes()
    assert (dest / "README.md").read_text(encoding="utf-8") == "# README\n" and not (dest / "raw").exists()


def test_off_a_terminal_a_line_at_least_every_30_s_with_the_cost_up_front(toks, texts, tmp_path, monkeypatch, capsys):
    """Off a terminal (captured stderr) the probe announces its estimated time before training,
    then logs each run's steps and scoring at most 30 s apart (a fake clock: 5 s per reading),
    and an ETA after each run."""
    import re
    import types

    import biotok.progress
    from biotok_train.probe import run_probe

    clock = [0.0]

    def tick() -> float:
        clock[0] += 5.0
        return clock[0]

    monkeypatch.setattr(biotok.progress, "time", types.SimpleNamespace(perf_counter=tick))
    monkeypatch.delenv("BIOTOK_PROGRESS_SECONDS", raising=False)
    run_probe(_cfg(toks, texts, steps=60), tmp_path / "p", progress=True)
    err = capsys.readouterr().err.splitlines()
    plan = next(i for i, l in enumerate(err) if l.startswith("probe: 2 of 2 runs to train (0 cached)"))
    assert "estimated" in err[plan] and "tokens/s" in err[plan]
    assert plan < min(i for i, l in enumerate(err) if l.startswith("probe/"))
    assert any(l.startswith("probe: encoding ") and l.endswith("with uni (1/2)") for l in err[:plan])
    for desc in ("probe/uni/seed0", "probe/bpe/seed0", "probe/uni/seed0 scoring"):
        stamps = []
        for l in err:
            m = re.match(re.escape(desc) + r": .*elapsed (\d+):(\d\d):(\d\d)", l)
            if m:
                h, mi, s = map(int, m.groups())
                stamps.append(3600 * h + 60 * mi + s)
        assert len(stamps) >= 2, desc
        assert all(0 < b - a <= 30 for a, b in zip(stamps, stamps[1:])), (desc, stamps)
    assert any(l.startswith("probe: 1 of 2 runs done") and "ETA" in l for l in err)
    assert any(re.search(r"probe/uni/seed0: step 60/60 .*loss \d", l) for l in err)


def test_pairs_all_compares_every_pair_and_reuses_the_runs(toks, texts, tmp_path, capsys):
    from biotok_train.probe import run_probe

    three = (toks[0], toks[1], toks[0])  # the third arm is named uni#2
    first = run_probe(_cfg(three, texts, steps=60), tmp_path / "p", progress=False)
    assert [(c["reference_arm"], c["candidate_arm"]) for c in first.comparisons] == [("uni", "bpe"), ("uni", "uni#2")]
    capsys.readouterr()
    r = run_probe(_cfg(three, texts, steps=60, pairs="all"), tmp_path / "p", progress=True)
    err = capsys.readouterr().err
    assert "seed 0: training" not in err and "runs to train" not in err  # pairs is analysis only: every run reused
    pairs = [(c["reference_arm"], c["candidate_arm"]) for c in r.comparisons]
    assert pairs == [("uni", "bpe"), ("uni", "uni#2"), ("bpe", "uni#2")]
    assert r.comparisons[:2] == first.comparisons  # the first arm's comparisons are the same numbers
    saved = json.loads((tmp_path / "p" / "probe.json").read_text(encoding="utf-8"))
    assert set(saved) == {"setup", "arms", "comparisons", "notes", "verdicts", "command", "versions"}
    assert "--pairs all" in saved["command"] and len(saved["comparisons"]) == 3
    assert any(v.startswith("uni#2 is ") and v.endswith("held-out documents).") and " bpe: " in v
               for v in saved["verdicts"])


def test_a_share_short_of_whole_never_reads_as_100_percent():
    """Issue 45: "... for 100 % of the held-out documents only" read as a contradiction; the note's
    share keeps the decimals that tell 99.96 % from all of them."""
    from biotok_train.probe.report import share_text

    assert share_text(0.9996) == "99.96 %"
    assert share_text(0.995) == "99.5 %"
    assert share_text(0.92) == "92 %"
    assert share_text(0.0004) == "0.04 %"
    assert share_text(1.0) == "100 %" and share_text(0.0) == "0 %"
