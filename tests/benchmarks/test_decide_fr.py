"""benchmarks/experiments/decide_fr.py at toy size (--quick): issue 45's scenario (a French corpus,
QUAERO CoNLL files, three vocabularies, the documented steps) ends on one decision page that names a
pick, discards the tiny ablation with its reason and costs the run that would settle it; a rerun
skips every finished step; the README's commands are the ones docs/evaluation.md tells a user."""

from __future__ import annotations

import json
import os
import re

import pytest

from tests.conftest import REPO

STATISTIC = 3  # biotok.decide's tier of fertility: an ablation's own fertility stays kept


@pytest.fixture(scope="module")
def recipe():
    from benchmarks.experiments import decide_fr

    return decide_fr


@pytest.fixture(scope="module")
def quick_run(recipe, shared_data, tmp_path_factory):
    work = tmp_path_factory.mktemp("decide_fr")
    cwd = os.getcwd()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_NUM_THREADS", "1")
        try:
            page = recipe.main(["--quick", "--work", str(work)])
        finally:
            os.chdir(cwd)
    return work, page


def test_the_decision_page_names_a_pick(recipe, quick_run):
    work, page = quick_run
    text = page.read_text(encoding="utf-8")
    d = json.loads((work / "decision.json").read_text(encoding="utf-8"))
    assert page == work / "decision.md" and (work / "decision.html").is_file()
    assert d["pick"] in recipe.ARMS and d["certainty"] in ("firm", "indicative", "weak")
    assert text.splitlines()[2].startswith(f"Pick: {d['pick']} ({d['certainty']}): ")
    assert f"## For {d['pick']}" in text
    assert d["sources"] == ["compare.json", "probe/probe.json", "ablation/ablation.json"]


def test_the_tiny_ablation_is_void_with_its_reason(quick_run):
    work, page = quick_run
    text = page.read_text(encoding="utf-8")
    d = json.loads((work / "decision.json").read_text(encoding="utf-8"))
    models = [f for f in d["findings"] if f["source"] == "ablation/ablation.json" and f["tier"] != STATISTIC]
    assert models and not any(f["kept"] for f in models)
    assert all("never left the plateau" in f["void"] for f in models if "masked-word" in f["instrument"])
    summary = text.splitlines()[2]
    assert re.search(r"The ablation in ablation/ablation\.json is void: all \d+ of its comparisons are discarded "
                     r"\([^)]*never left the plateau", summary)
    assert re.search(r"never left the unigram plateau: held-out \[MASK\] loss minus unigram floor \+[\d.]+ "
                     r"\[\+[\d.]+, \+[\d.]+\] nats", text)


def test_the_page_costs_the_conclusive_run(quick_run):
    _, page = quick_run
    text = page.read_text(encoding="utf-8")
    settle = text.split("## What would settle it", 1)[1].split("## Sources", 1)[0]
    assert re.search(r"From scratch on this CPU at the measured plateau threshold: 3 arms .*: about [\d.,]+ CPU-hours",
                     settle)
    assert re.search(r"The from-scratch grid on one GPU: .*: about [\d.,]+ GPU-hours", settle)
    assert "biotok-train ablate --tokenizers TOK... " in settle


def test_a_rerun_skips_every_finished_step(recipe, quick_run):
    work, page = quick_run
    timings = (work / "timings.json").read_bytes()
    before = page.stat().st_mtime_ns
    cwd = os.getcwd()
    try:
        assert recipe.main(["--quick", "--work", str(work)]) == page
    finally:
        os.chdir(cwd)
    assert (work / "timings.json").read_bytes() == timings and page.stat().st_mtime_ns == before
    assert list(json.loads(timings)) == ["inputs", "train Unigram_L", "train BPE", "compare", "probe", "ablate",
                                         "decide", "report"]


def test_the_readme_is_computed_from_the_run(recipe, quick_run):
    from benchmarks.experiments import decide_fr_page

    work, _ = quick_run
    timings = json.loads((work / "timings.json").read_text(encoding="utf-8"))
    text = decide_fr_page.readme(work, timings, recipe.QUICK, recipe.ARMS, recipe.SCRIPT)
    d = json.loads((work / "decision.json").read_text(encoding="utf-8"))
    assert d["summary"] in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == len(timings)
    cpu = sum(t["cpu_s"] for t in timings.values())
    assert [n for n, t in timings.items() if t["side_by_side"]] == ["probe", "ablate"]
    assert f"The whole scenario cost {decide_fr_page._minutes(cpu)} of CPU; on 2 free cores " in text
    assert "within the hour" in text  # toy sizes: seconds
    wall = decide_fr_page.total_wall(timings)
    assert wall == sum(t["wall_s"] for n, t in timings.items() if n not in ("probe", "ablate")) + max(
        timings["probe"]["wall_s"], timings["ablate"]["wall_s"])
    assert f"took {decide_fr_page._minutes(wall)}." in text
    held = (work / "heldout.txt").read_text(encoding="utf-8").count("\n")
    assert f"`heldout.txt`: {held:,} lines" in text


def test_the_commands_are_the_documented_ones(recipe):
    from benchmarks.experiments import decide_fr_page

    doc = re.sub(r" \\\n\s+", " ", (REPO / "docs" / "evaluation.md").read_text(encoding="utf-8"))
    cmds = decide_fr_page.commands(recipe.FULL, recipe.ARMS)
    for step, cmd in cmds.items():
        if step != "inputs":
            assert cmd in doc, step
    assert decide_fr_page.options({"epochs": 1, "seeds": (0, 1), "batch_size": 8}) == "--ft-epochs 1 --seeds 0 1 --batch-size 8"
