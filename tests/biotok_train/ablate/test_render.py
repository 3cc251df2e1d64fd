"""ablate.render: the page is a pure function of ablation.json, computes nothing, and shows "no signal"."""

import ast
import shutil
from pathlib import Path

import pytest

from biotok_train.ablate import leg_names, render, run_ablation
from biotok_train.ablate.results import load
from biotok_train.ablate.config import AblationConfig, Finetuning, Statistics
from tests.biotok_train.ablate.test_run import _bio_task, _fake_ablation

RESULTS = Path(__file__).resolve().parents[3] / "docs" / "results"
PAGES = sorted(p.parent.name for p in RESULTS.glob("*/ablation.json") if (p.parent / "ablation.md").is_file())


def _plateau_ablation(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece, monkeypatch):
    """A toy ablation where the candidate stays on the plateau and no arm beats its floor on the task."""
    task = _bio_task(tmp_path / "task")
    toks = (str(tiny_unigram), str(tiny_wordpiece))
    cfg = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),),
                         finetuning=Finetuning(seeds=(0, 1)), statistics=Statistics(n_words=40, n_resamples=300))
    ref, cand = leg_names(toks)
    skill = {("tiny", ref): lambda i, f: i % 2 == 0, ("tiny", cand): lambda i, f: i % 3 == 0}
    mlm = {("tiny", ref): [1] * 30 + [0] * 10, ("tiny", cand): [1] * 5 + [0] * 35}
    _fake_ablation(monkeypatch, cfg, skill, dict(skill), mlm, {ref: True, cand: False})
    return run_ablation(cfg, tmp_path / "out", progress=False), ref, cand


def test_the_page_renders_again_from_ablation_json_alone(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece,
                                                        monkeypatch):
    """Delete jobs/ (every record), render again from ablation.json: the same ablation.md and plot, byte for byte;
    and the MLM "worse" of a plateau arm, and a task no arm beats its floor on, show "no signal"."""
    report, ref, cand = _plateau_ablation(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece, monkeypatch)
    out = tmp_path / "out"
    md, png = (out / "ablation.md").read_bytes(), (out / "ablation.png").read_bytes()
    by = {c["task"]: c for c in report.comparisons}
    assert by["mlm"]["verdict"] == "worse" and by["mlm"]["signal"] is False  # the artefact of issue 45
    assert all(c.get("signal") is False for c in report.comparisons)
    row = next(line for line in report.markdown.splitlines() if line.startswith(f"| {cand} |"))
    assert row.count("| no signal |") == 2 and "**worse**" not in row and "**" not in row
    said = [v for v in report.sentences if v.startswith("At size tiny, on MLM top-1, ")]
    assert said == [f"At size tiny, on MLM top-1, {cand} against {ref} carries no signal: {by['mlm']['difference']:+.3f} "
                    f"[{by['mlm']['low']:+.3f}, {by['mlm']['high']:+.3f}] (95% paired bootstrap interval over 40 held-out "
                    f"words × 1 pretraining seed(s)), but {cand} did not leave the plateau, so the difference says "
                    "nothing about the vocabularies."]
    assert not any(f"{cand} is worse" in v or f"{cand} is better" in v for v in report.sentences)
    shutil.rmtree(out / "jobs")
    (out / "ablation.md").unlink()
    (out / "ablation.png").unlink()
    assert render.rewrite(out).encode("utf-8") == md
    assert (out / "ablation.md").read_bytes() == md and (out / "ablation.png").read_bytes() == png


def test_the_plot_says_no_signal(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece, monkeypatch):
    """Each bar's label is the shown verdict: "no signal" above the plateau arm, never "worse"."""
    report, ref, cand = _plateau_ablation(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece, monkeypatch)
    said = []

    class Axes:
        def __getattr__(self, name):
            return lambda *a, **k: said.append(a[0]) if name == "annotate" else None

    res = load(tmp_path / "out")
    for k in ("mlm", *res.setup.tasks):
        render._bar(Axes(), res, "tiny", k, res.names.index(cand), "C0")
    assert said == ["no signal", "no signal"]


@pytest.mark.parametrize("page", PAGES)
def test_published_pages_render_byte_for_byte_from_their_json(page):
    """Every published ablation.md is the render of the ablation.json beside it (and costs.json where there is one)."""
    d = RESULTS / page
    assert render.markdown(load(d)) == (d / "ablation.md").read_text(encoding="utf-8")


def test_published_readmes_end_with_the_render_of_their_json():
    """A page published whole in README.md (render.publish) ends with the render of its ablation.json."""
    pages = [p.parent for p in RESULTS.glob("*/ablation.json") if not (p.parent / "ablation.md").is_file()]
    assert pages
    for d in pages:
        body = render.markdown(load(d)).split("\n", 1)[1].lstrip("\n")
        assert (d / "README.md").read_text(encoding="utf-8").endswith(body), d.name


def test_render_imports_nothing_that_computes_statistics():
    """render.py and what it imports from the library: no scipy, numpy, stats, analysis, plateau."""
    banned = ("scipy", "numpy", "biotok_train.stats", "biotok_train.ablate.analysis", "biotok_train.ablate.plateau",
              "biotok_train import stats", "torch", "sklearn")
    src = Path(render.__file__).parent
    for module in ("render", "results"):
        tree = ast.parse((src / f"{module}.py").read_text(encoding="utf-8"))
        names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        names += [f"{n.module} import {a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names]
        names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        bad = [n for n in names for b in banned if n == b or n.startswith(b + ".") or n.startswith(b + " ")]
        assert not bad, f"{module}.py imports {bad}"
