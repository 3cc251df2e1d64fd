"""``biotok sweep`` and ``biotok cost`` through the command line (click's CliRunner)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from biotok.cli import main


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_sweep_command(tmp_path, sample_corpus):
    out = tmp_path / "sw"
    r = run("sweep", str(sample_corpus), "--sizes", "600,1200,2400", "--out", str(out), "--no-progress")
    assert r.exit_code == 0, r.output
    assert "knee of the fertility curve" in r.output and "fertility" in r.output
    assert "power law most closely at" in r.output and "Zipf R²" in r.output  # both criteria shown
    data = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert [p["vocab_size"] for p in data["points"]] == [600, 1200, 2400]
    assert (out / "sweep.png").is_file() and (out / "sweep.md").is_file()
    again = run("sweep", str(sample_corpus), "--sizes", "600", "--out", str(out))
    assert again.exit_code == 2 and "already exists" in again.output and "Traceback" not in again.output


def test_sweep_bad_sizes(tmp_path, sample_corpus):
    r = run("sweep", str(sample_corpus), "--sizes", "8k,16k", "--out", str(tmp_path / "x"))
    assert r.exit_code == 2 and "comma-separated integers" in r.output
    r = run("sweep", str(sample_corpus), "--sizes", "10", "--out", str(tmp_path / "x"))
    assert r.exit_code == 2 and "biotok: error: vocabulary sizes must be >= 100" in r.output


def test_cost_command(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece):
    args = ["cost", str(tiny_unigram), str(tiny_wordpiece), "--corpus", str(sample_corpus), "--corpus-size", "7GB",
            "--tokens-per-second", "50000", "--gpus", "8", "--epochs", "2"]
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert "GPU-hours" in r.output and "50,000 tokens/s per GPU (given)" in r.output
    j = json.loads(run(*args, "--json").output)
    assert j["corpus_bytes"] == 7 * 10**9 and j["config"]["gpus"] == 8
    a, b = j["costs"]
    assert a["tokens_total"] == round(2 * a["tokens_per_epoch"]) and a["wall_hours"] * 8 == a["gpu_hours"]
    bad = run("cost", str(tiny_unigram), "--corpus", str(sample_corpus), "--corpus-size", "lots")
    assert bad.exit_code == 2 and "biotok: error: cannot read the size 'lots'" in bad.output
