"""benchmarks/experiments/probe_fr.py: --publish rewrites docs/results/probe-fr/README.md from
its probe.json files byte for byte, the README's command is the one that gives those results,
and the split holds each 10th document out."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from tests.conftest import REPO

PUB = REPO / "docs" / "results" / "probe-fr"


@pytest.fixture(scope="module")
def probe_fr():
    from benchmarks.experiments import probe_fr

    return probe_fr


def _results(raw_seeds, fair_seeds, steps=400) -> dict:
    return {m: {"setup": {"steps": steps, "seeds": list(s)}} for m, s in (("raw", raw_seeds), ("fair", fair_seeds)) if s}


def test_command_names_only_what_differs_from_the_defaults(probe_fr):
    base = "python -m benchmarks.experiments.probe_fr"
    command = probe_fr.RECIPE.command
    assert command(_results((0, 1, 2), (0, 1, 2)), False) == base
    assert command(_results((0,), (0, 1, 2)), False) == base + " --raw-seeds 0"
    assert command(_results((0, 1), (0, 1), steps=800), False) == base + " --steps 800 --seeds 0 1"
    assert command(_results((), (0, 1, 2)), False) == base + " --modes fair"
    assert command(_results((0,), (0,), steps=30), True) == base + " --quick"
    assert command(_results((0,), (0,), steps=40), True) == base + " --quick --steps 40"


def test_publish_rewrites_the_readme_byte_identical(probe_fr, tmp_path, capsys):
    pub = tmp_path / "probe-fr"
    shutil.copytree(PUB, pub)
    (pub / "README.md").write_text("stale\n", encoding="utf-8")
    recipe = dataclasses.replace(probe_fr.RECIPE, published=pub)
    assert probe_fr.main(recipe, ["--publish"]) == 0
    assert (pub / "README.md").read_bytes() == (PUB / "README.md").read_bytes()
    for mode in ("raw", "fair"):  # the runs' files are left as they are
        assert (pub / mode / "probe.json").read_bytes() == (PUB / mode / "probe.json").read_bytes()
    shutil.rmtree(pub / "raw")
    shutil.rmtree(pub / "fair")
    capsys.readouterr()
    assert probe_fr.main(recipe, ["--publish"]) == 2
    err = capsys.readouterr().err
    assert "no raw/ nor fair/ probe.json" in err and len(err.strip().splitlines()) == 1


def test_quick_readme_names_the_quick_vocabularies_and_command(probe_fr):
    results = {m: json.loads((PUB / m / "probe.json").read_text(encoding="utf-8")) for m in ("raw", "fair")}
    for r in results.values():
        r["setup"].update(steps=30, seeds=[0])
    timings = {m: {} for m in results}
    text = probe_fr.RECIPE.readme(results, timings, quick=True)
    assert "probe_fr --quick\n" in text and "Unigram_L-1k (1,000 pieces), BPE-1k (1,000 pieces)" in text
    assert "the first 1 MB of the E3C drug leaflets" in text


def test_split_holds_each_tenth_document_out(probe_fr, shared_data, tmp_path):
    train, held = probe_fr.split(tmp_path, quick=False)
    assert len(train.read_text(encoding="utf-8").splitlines()) == 1368  # as probe.json records
    assert len(held.read_text(encoding="utf-8").splitlines()) == 152
    qt, qh = probe_fr.split(tmp_path, quick=True)
    assert qt.read_text(encoding="utf-8").splitlines() == train.read_text(encoding="utf-8").splitlines()[:200]
    assert len(qh.read_text(encoding="utf-8").splitlines()) == 20
