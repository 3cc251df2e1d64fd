"""biotok decide: evidence folders (JSON in the schemas ablate, probe, sweep and compare write)
give one pick, with void evidence discarded for its reason, disagreements and costs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from biotok.cli import main
from biotok.config import DecideConfig
from biotok.decide import decide
from biotok.report.decision import write_decision
from biotok.errors import ConfigError, DamagedFileError

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


def _cmp(size, task, ref, cand, diff, low, high, verdict, metric="entity_f1", n=100):
    return {"size": size, "task": task, "reference_arm": ref, "candidate_arm": cand, "metric": metric,
            "reference": 0.5, "candidate": 0.5 + diff, "difference": diff, "low": low, "high": high,
            "confidence": 0.95, "verdict": verdict, "higher_is_better": True, "n_examples": n, "n_clusters": n,
            "n_resamples": 1000, "n_undefined": 0, "seed": 0}


def _floor(size, task, arm, beats, pre=0.4, floor=0.3):
    return {**_cmp(size, task, arm, arm, pre - floor, pre - floor - 0.02, pre - floor + 0.02,
                   "better" if beats else "worse"), "arm": arm, "reference": floor, "candidate": pre,
            "beats_floor": beats}


def ablation(arms=("A", "B", "C"), pseeds=(0, 1), left=True, beats=True, comparisons=None, fertility=None,
             mlm_beats=None):
    """An ablation.json as biotok_train.ablate writes it (the fields decide reads, and more)."""
    fert = fertility or {a: 1.40 + 0.05 * i for i, a in enumerate(arms)}
    rows = []
    for a in arms:
        rows.append({"size": "tiny", "name": a, "tokenizer": f"/toks/{a}", "vocab_size": 8000, "fertility": fert[a],
                     "steps": 100, "tokens_seen": 102_400, "init": "scratch", "vocabulary": a,
                     "metrics": {"ner": {"mean": 0.5, "std": 0.01, "n": 2, "values": [0.5, 0.5]}},
                     "heldout_mlm": {"seeds": len(pseeds), "positions": 1000, "loss": 6.0,
                                     "floor_loss": 6.1 if left else 5.9, "gap": -0.1 if left else 0.1,
                                     "gap_low": -0.12 if left else 0.08, "gap_high": -0.08 if left else 0.12,
                                     "left_plateau": left, "top1": 0.1, "floor_top1": 0.05}})
    if comparisons is None:
        comparisons = [_cmp("tiny", "ner", arms[0], arms[1], 0.05, 0.02, 0.08, "better"),
                       _cmp("tiny", "ner", arms[0], arms[2], 0.01, -0.02, 0.04, "indistinguishable"),
                       _cmp("tiny", "mlm", arms[0], arms[1], -0.02, -0.03, -0.01, "worse", metric="top1")]
    mlm = mlm_beats if mlm_beats is not None else left
    return {
        "recipe": {"budget": 100, "batch_size": 8, "seq_len": 128, "pretrain_seeds": list(pseeds), "seeds": [0, 1],
                   "base": None},
        "tokenizers": [f"/toks/{a}" for a in arms], "reference": arms[0], "command": "biotok-train ablate ...",
        "tasks": {"ner": {"name": "ner", "type": "ner", "metric": "entity_f1", "n_test": 100}},
        "arms": rows, "comparisons": comparisons,
        "floors": [_floor("tiny", "ner", a, beats) for a in arms],
        "mlm_floors": [{**_floor("tiny", "mlm", a, mlm), "word": "de"} for a in arms],
        "rankings": [], "verdicts": [],
    }


def probe(arms=("A", "B", "C"), seeds=(0, 1, 2), text="fair: lowercases", norms=None, comparisons=None,
          below=True):
    """A probe.json as biotok_train.probe.report writes it."""
    norms = norms or {a: "lowercases" for a in arms}
    rows = [{"name": a, "tokenizer": f"/toks/{a}", "vocab_size": 8000, "normalization": norms[a],
             "bits_per_char": {"mean": 1.5, "std": 0.01, "n": len(seeds), "values": [1.5] * len(seeds)},
             "unigram_floor_bits_per_char": 2.0,
             "versus_floor": {**_cmp("", "", a, a, -0.5 if below else 0.01, -0.6 if below else -0.02,
                                     -0.4 if below else 0.03, "better" if below else "indistinguishable",
                                     metric="bits/char minus unigram floor"), "higher_is_better": False}}
            for a in arms]
    if comparisons is None:
        comparisons = [{"reference_arm": arms[0], "candidate_arm": a, "metric": "bits/char", "reference": 1.5,
                        "candidate": 1.4, "difference": -0.1 * (i + 1), "low": -0.1 * (i + 1) - 0.02,
                        "high": -0.1 * (i + 1) + 0.02, "confidence": 0.95, "verdict": "better",
                        "higher_is_better": False, "n_examples": 50, "n_clusters": 50, "n_resamples": 1000,
                        "n_undefined": 0, "seed": 0} for i, a in enumerate(arms[1:])]
    return {"setup": {"model": {"class": "GPT2LMHeadModel"}, "steps": 400, "seeds": list(seeds), "text": text,
                      "tokens_per_arm": 409600},
            "arms": rows, "comparisons": comparisons, "notes": [], "verdicts": [], "command": "", "versions": ""}


def compare_json(fert):
    """`biotok compare --json`'s output (its corpus part)."""
    return {"tokenizers": [{"name": n, "lowercase": False} for n in fert], "vocab": {},
            "corpus": {"paths": ["held.txt"], "tokenizers": [
                {"name": n, "vocab_size": 8000, "lines": 10, "words": 1000, "fertility": f} for n, f in fert.items()]}}


def write(folder: Path, name: str, obj) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(obj), encoding="utf-8")
    return folder


def test_downstream_with_signal_decides_firmly(tmp_path):
    d = decide([write(tmp_path / "abl", "ablation.json", ablation())])
    # ner: A better than B (candidate B's difference +0.05 says B better) -> B wins the one decisive ner pair
    assert d.pick == "B" and d.certainty == "firm" and d.tier == 1
    assert d.scores["B"] == 1 and d.scores["A"] == -1 and d.scores["C"] == 0
    assert not d.settle  # downstream decides: nothing to settle
    assert "Pick: B (firm)" in d.summary
    # the MLM top-1 says A is better than B: the instruments disagree, and the page says so
    assert any(s.startswith("A against B:") for s in d.disagreements)


def test_plateau_and_no_signal_are_discarded_with_their_reasons(tmp_path):
    ab = ablation(left=False, beats=False)
    d = decide([write(tmp_path / "abl", "ablation.json", ab)])
    kept = [f for f in d.findings if f.kept]
    assert all(f.tier == 3 for f in kept)  # only fertility survives
    mlm = next(f for f in d.findings if "masked-word" in f.instrument)
    assert "A never left the plateau" in mlm.void and "B never left the plateau" in mlm.void
    ner = [f for f in d.findings if "ner entity_f1" in f.instrument]
    assert ner and all("no signal on ner entity_f1" in f.void for f in ner)
    reasons = " ".join(x.reason for x in d.discarded)
    assert "no arm beats its random-init floor" in reasons and "+0.100 [+0.080, +0.120] nats" in reasons
    # fertility: A 1.40 < B 1.45 < C 1.50, every gap over 1 %: A wins both pairs
    assert d.pick == "A" and d.certainty == "weak"
    assert f"The ablation in {tmp_path / 'abl' / 'ablation.json'} is void: all 3 of its comparisons are discarded" \
        in d.summary and "never left the plateau" in d.summary
    md = d.markdown()
    assert "## Evidence discarded" in md and "## What would settle it" in md
    pro, con = md.split("## For A\n")[1].split("## Against A\n")
    assert "fertility on the ablation's corpus, against B: B minus A +0.050 pieces/word." in pro  # the sign's direction named
    assert "the ablation's ner entity_f1, against B" in con and "(discarded: no signal on ner entity_f1)" in con


def test_one_pretraining_seed_is_discarded_unless_accepted(tmp_path):
    folder = write(tmp_path / "abl", "ablation.json", ablation(pseeds=(0,)))
    d = decide([folder])
    assert all(not f.kept for f in d.findings if f.tier < 3)
    assert any("1 pretraining seed, fewer than 2" in x.reason for x in d.discarded)
    d1 = decide([folder], DecideConfig(min_seeds=1))
    assert d1.pick == "B" and d1.certainty == "firm"


def test_raw_probe_of_different_normalizations_is_not_like_for_like(tmp_path):
    norms = {"A": "keeps case and accents", "B": "lowercases", "C": "keeps case and accents"}
    d = decide([write(tmp_path / "p", "probe.json", probe(text="raw", norms=norms))])
    assert all(not f.kept for f in d.findings)
    assert any("not like for like" in x.reason and "--fair" in x.reason for x in d.discarded)
    assert d.pick is None and d.certainty == "none"
    assert d.summary.startswith("No pick")


def test_probe_against_fertility_disagreement_is_stated(tmp_path):
    # the probe: B and C better than A; fertility: A lowest, so A better than both
    folder = write(tmp_path / "p", "probe.json", probe())
    cmp_file = tmp_path / "compare.json"
    cmp_file.write_text(json.dumps(compare_json({"A": 1.40, "B": 1.50, "C": 1.60})), encoding="utf-8")
    d = decide([folder, cmp_file])
    assert d.tier == 2  # the probe outranks fertility
    joined = " ".join(d.disagreements)
    assert "A against B" in joined and "the causal-LM probe (fair text, bits/char)" in joined and "fertility" in joined
    # B and C are each compared only with A: they tie, and the page asks for every pair
    assert d.pick is None and "--pairs all" in d.summary


def test_every_pair_breaks_the_tie(tmp_path):
    arms = ("A", "B", "C")
    comps = probe()["comparisons"] + [{**probe()["comparisons"][0], "reference_arm": "B", "candidate_arm": "C",
                                       "difference": -0.1, "low": -0.12, "high": -0.08, "verdict": "better"}]
    d = decide([write(tmp_path / "p", "probe.json", probe(arms=arms, comparisons=comps))])
    assert d.pick == "C" and d.certainty == "indicative" and d.scores == {"A": -2, "B": 0, "C": 2}


def test_probe_arm_not_below_its_floor_voids_its_comparisons(tmp_path):
    d = decide([write(tmp_path / "p", "probe.json", probe(below=False))])
    assert all("is not below its unigram floor" in f.void for f in d.findings)


def test_fertility_tolerance(tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps(compare_json({"A": 1.400, "B": 1.405})), encoding="utf-8")
    assert decide([f]).pick is None  # 0.36 % apart: not told apart at 1 %
    assert decide([f], DecideConfig(fertility_tolerance=0.001)).pick == "A"


def test_costs_are_computed_from_the_rates(tmp_path):
    cfg = DecideConfig()
    d = decide([write(tmp_path / "abl", "ablation.json", ablation(left=False, beats=False))], cfg)
    cpu, cont, gpu = d.settle
    assert gpu.unit == "GPU-hours" and gpu.hours == pytest.approx(
        3 * cfg.seeds_to_settle * cfg.gpu_positions_per_arm / cfg.gpu_positions_per_s / 3600)
    assert cpu.unit == "CPU-hours" and "14,336,000 token positions (14,000 steps of 8 × 128)" in cpu.what
    assert "--budget 14000" in cpu.command
    # the user's own costs.json gives the CPU rate: 3 arms x 2 seeds x 102,400 positions in 60 CPU-seconds
    write(tmp_path / "abl", "costs.json", {"format": "biotok-costs/1", "by_arm": {
        a: {"pretrain": 20.0, "finetune": 5.0} for a in ("A", "B", "C")}})
    d2 = decide([tmp_path / "abl"], cfg)
    rate = 3 * 2 * 102_400 / 60.0
    assert d2.settle[0].hours == pytest.approx(3 * 3 * cfg.plateau_positions / rate / 3600)
    assert f"{rate:,.0f} positions per CPU-second, measured by the pretraining jobs" in d2.settle[0].basis
    # a toy ablation's few seconds of pretraining measure its start-up, not a rate: the measured table instead
    write(tmp_path / "abl", "costs.json", {"format": "biotok-costs/1", "by_arm": {
        a: {"pretrain": 1.0} for a in ("A", "B", "C")}})
    assert "measured by the pretraining jobs" not in decide([tmp_path / "abl"], cfg).settle[0].basis


def test_gpu_rate_is_the_measured_one():
    suite = REPO / "benchmarks" / "results" / "gpu" / "h200-2026-11-27" / "ablation.json"
    if not suite.is_file():
        pytest.skip("the GPU suite's record is absent")
    step = json.loads(suite.read_text(encoding="utf-8"))["steps"]["ablation"]
    rate = sum(leg["tokens_seen"] for leg in step["legs"]) / step["wall_s"]
    assert DecideConfig().gpu_positions_per_s == pytest.approx(rate)


def test_plateau_threshold_is_the_measured_one():
    d = json.loads((RESULTS / "plateau-fr" / "ablation.json").read_text(encoding="utf-8"))
    assert f"{DecideConfig().plateau_positions:,} token positions" in " ".join(d["verdicts"])


def test_sweep_is_context(tmp_path):
    sw = {"algo": "unigram", "hidden_size": 768, "eval_lines": 100, "eval_words": 1000, "knee": 16000,
          "zipf_best": 8000, "points": [{"vocab_size": s, "fertility": f} for s, f in ((8000, 1.5), (16000, 1.4))]}
    d = decide([write(tmp_path / "s", "sweep.json", sw), write(tmp_path / "p", "probe.json", probe())])
    assert any("knee of the fertility curve is at 16,000" in c and "best Zipf fit is at 8,000" in c for c in d.context)


def test_docs_results_ablation_cpu_is_void():
    d = decide([RESULTS / "ablation-cpu"])
    assert all(not f.kept for f in d.findings if f.tier < 3)
    reasons = " ".join(x.reason for x in d.discarded)
    # regenerated with held-out [MASK] numbers: its MLM rows are discarded by the plateau (was: by always answering "de")
    assert "never left the unigram plateau" in reasons and "no arm beats its random-init floor" in reasons
    assert d.certainty in ("weak", "none") and d.settle


def test_docs_results_probe_fr_raw_discarded_fair_kept():
    d = decide([RESULTS / "probe-fr"])
    raw = [f for f in d.findings if "raw text" in f.instrument]
    fair = [f for f in d.findings if "fair text" in f.instrument]
    assert raw and fair and not any(f.kept for f in raw) and all(f.kept for f in fair)


def test_same_evidence_same_bytes(tmp_path):
    folder = write(tmp_path / "abl", "ablation.json", ablation(left=False))
    a = write_decision(decide([folder]), tmp_path / "a.md").read_bytes()
    b = write_decision(decide([folder]), tmp_path / "b.md").read_bytes()
    assert a == b
    html = write_decision(decide([folder]), tmp_path / "d.html").read_text(encoding="utf-8")
    assert '<section id="decision">' in html and "http" not in html.split("<style>")[0]


@pytest.mark.parametrize("make, error", [
    (lambda p: p / "missing", ConfigError),
    (lambda p: write(p / "empty", "x.txt", {}) and p / "empty", ConfigError),
    (lambda p: write(p / "rep", "report.md", "# Tokenizer comparison") and p / "rep", ConfigError),
    (lambda p: write(p, "other.json", {"hello": 1}) / "other.json", ConfigError),
    (lambda p: write(p, "vocab-only.json", {"tokenizers": [{"name": "A"}], "vocab": {}}) / "vocab-only.json",
     ConfigError),
    (lambda p: (p / "bin.json").write_bytes(b"\xff\xfe\x00") and p / "bin.json", DamagedFileError),
    (lambda p: write(p, "ablation.json", {"recipe": {}, "arms": [{}], "comparisons": []}) / "ablation.json",
     DamagedFileError),
])
def test_bad_evidence_is_one_error(tmp_path, make, error):
    with pytest.raises(error):
        decide([make(tmp_path)])


def test_cli(tmp_path):
    folder = write(tmp_path / "abl", "ablation.json", ablation())
    run = CliRunner().invoke(main, ["decide", str(folder)], prog_name="biotok")
    assert run.exit_code == 0 and run.output.startswith("# Decision") and "Pick: B (firm)" in run.output
    out = tmp_path / "decision.html"
    assert CliRunner().invoke(main, ["decide", str(folder), "--out", str(out)], prog_name="biotok").exit_code == 0
    again = CliRunner().invoke(main, ["decide", str(folder), "--out", str(out)], prog_name="biotok")
    assert again.exit_code == 2 and "already exists" in again.output
    over_input = CliRunner().invoke(main, ["decide", str(folder / "ablation.json"), "--out",
                                           str(folder / "ablation.json"), "--force"], prog_name="biotok")
    assert over_input.exit_code == 2 and json.loads((folder / "ablation.json").read_text())["arms"]
    bad = CliRunner().invoke(main, ["decide", str(tmp_path / "nope")], prog_name="biotok")
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "evidence not found" in bad.output
    js = CliRunner().invoke(main, ["decide", str(folder), "--json"], prog_name="biotok")
    assert json.loads(js.output)["pick"] == "B"


def test_import_stays_torch_free():
    code = "import sys, biotok.decide, biotok.cli.decide; print('torch' in sys.modules, 'biotok_train' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]



def test_report_puts_the_decision_on_top(tmp_path, tiny_unigram, tiny_wordpiece, sample_lines):
    """`biotok report --decide-from`: the decision, with the report's own fertility, opens both pages."""
    from biotok.formats import load as load_any
    from biotok.report import build_report

    toks = [load_any(tiny_unigram, name="A"), load_any(tiny_wordpiece, name="B")]
    folder = write(tmp_path / "abl", "ablation.json", ablation(arms=("A", "B"), left=False, beats=False, comparisons=[
        _cmp("tiny", "mlm", "A", "B", -0.02, -0.03, -0.01, "worse", metric="top1")]))
    rep = build_report(toks, sample_lines[:40], tmp_path / "rep", corpus_label="sample", decide_from=[folder])
    md = rep.markdown.read_text(encoding="utf-8")
    assert md.startswith("# Tokenizer comparison\n\n## Decision\n\n")
    assert md.index("## Decision") < md.index("## Fragmentation")
    assert "fertility on " in md and "words of the compared corpus" in md and "never left the plateau" in md
    page = rep.html.read_text(encoding="utf-8")
    assert page.index('<section id="decision">') < page.index('<section id="summary">')
    with pytest.raises(ConfigError):  # bad evidence fails before the corpus is measured
        build_report(toks, iter(()), tmp_path / "rep2", decide_from=[tmp_path / "nope"])
    assert not (tmp_path / "rep2").exists()


def test_plateau_warning_names_the_measured_threshold():
    from biotok.decide import plateau_warning

    line = plateau_warning("tiny", 6_144_000)  # ablate's defaults in docs/results/ablation-cpu: 6000 x 8 x 128
    assert line.startswith("warning: 6,144,000 token positions per arm is below the 14,336,000")
    assert "docs/results/plateau-fr" in line and "--budget 14000 at --batch-size 8 --seq-len 128" in line and "\n" not in line
    assert plateau_warning("tiny", 14_336_000) is None
    assert plateau_warning("small", 1_000) is None  # not measured at that size: no warning
    assert plateau_warning("tiny", 1_000, from_base=True) is None and plateau_warning("tiny", 1_000, device="cuda") is None


def test_masked_words_no_better_than_the_commonest_word_void_that_metric_only(tmp_path):
    """Past the held-out plateau, a masked-word top-1 no better than always "de" still says nothing
    (a model answering its commonest piece: `s` for a Unigram_L): that metric only is void."""
    d = decide([write(tmp_path / "abl", "ablation.json", ablation(left=True, mlm_beats=False))])
    mlm = next(f for f in d.findings if "masked-word" in f.instrument)
    assert "A's masked-word top-1 is no better than always “de”" in mlm.void
    ner = [f for f in d.findings if "ner" in f.instrument]
    assert all(f.kept for f in ner) and d.pick == "B" and d.certainty == "firm"


def test_the_ablations_own_probe_is_evidence(tmp_path):
    ab = ablation()
    for i, a in enumerate(ab["arms"]):
        a["probe"] = {"bits_per_char": {"mean": 1.5, "std": 0.01, "n": 3, "values": [1.5] * 3},
                      "versus_floor": {"difference": -0.5, "low": -0.6, "high": -0.4, "verdict": "better"},
                      **({"versus_reference": {"difference": -0.1, "low": -0.15, "high": -0.05, "verdict": "better"}}
                         if i else {})}
    d = decide([write(tmp_path / "abl", "ablation.json", ab)])
    probe_findings = [f for f in d.findings if "causal-LM probe" in f.instrument]
    assert [(f.reference, f.candidate, f.better, f.kept) for f in probe_findings] == [
        ("A", "B", "B", True), ("A", "C", "C", True)]
