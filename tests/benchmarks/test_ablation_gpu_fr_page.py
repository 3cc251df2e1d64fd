"""benchmarks/experiments/ablation_gpu_fr_page.py: the prediction page, every sentence computed from plain numbers."""

from __future__ import annotations

import json

import pytest

from benchmarks.experiments import ablation_gpu_fr_page as R
from biotok_train.ablate.config import AblationConfig, Finetuning, Pretraining
from biotok_train.predict import Ranking

TEXT = {"tasks": ["e3c"], "evaluated_sentences": 12, "min_words": 6,
        "sources": {"A": {"lines_in": 3, "chars_in": 300, "kept": 2, "excluded": 1, "matched": 1, "chars": 200},
                    "B": {"lines_in": 2, "chars_in": 50, "kept": 2, "excluded": 0, "matched": 0, "chars": 50}},
        "text": {"lines": 4, "chars": 250}, "pretrain": {"lines": 3, "chars": 200}, "heldout": {"lines": 1, "chars": 50}}
METRICS = {n: {"fertility": f, "renyi_efficiency": r, "zipf": z, "chars_per_piece": 4.0, "pretrain_pieces": p}
           for n, f, r, z, p in (("cam", 1.5, 0.40, {"r2": 0.9, "exponent": 1.1}, 1_000),
                                 ("uni", 1.2, 0.45, None, 500))}


def test_the_cpu_sentence_names_each_phase_and_what_was_not_recorded():
    assert R.cpu_sentence({"text": 60, "vocabularies": 120, "intrinsic": 30}, 600, 4) == (
        "The CPU side took 14 CPU-minutes on a shared 2-core machine (text 1.0, vocabularies 2.0, intrinsic 0.5, "
        "probe (4 runs) 10.0).")
    assert R.cpu_sentence({"vocabularies": 120}, 0, 0).endswith("; not recorded: text, intrinsic (a phase is timed "
                                                                "the first time it runs).")


def test_a_phase_is_timed_only_the_first_time_it_runs(tmp_path):
    done = tmp_path / "done.txt"
    assert R.timed_phase(tmp_path, "text", done, lambda x: done.write_text(x) and x, "made") == "made"
    spent = json.loads((tmp_path / "cpu_seconds.json").read_text(encoding="utf-8"))
    assert list(spent) == ["text"] and spent["text"] >= 0
    (tmp_path / "cpu_seconds.json").write_text(json.dumps({"text": 42.0}), encoding="utf-8")
    assert R.timed_phase(tmp_path, "text", done, lambda: "again") == "again"  # found done: nothing new recorded
    assert json.loads((tmp_path / "cpu_seconds.json").read_text(encoding="utf-8")) == {"text": 42.0}


def test_the_text_section_counts_what_was_left_out_and_the_epochs():
    lines = R.text_section(TEXT, METRICS, 20, 10_000)
    assert "| A | 3 | 300 | 1 | 1 | 200 |" in lines
    assert lines[lines.index("| B | 2 | 50 | 0 | 0 | 50 |") + 2].startswith(
        "- 1 lines left out because they are or contain one of the 12 dev and test sentences of e3c")
    assert any("each 20th line held out as `ablate` does: pretraining part 200 characters, held-out part 50." in x
               for x in lines)
    assert lines[-2] == ("- Its pretraining part in pieces, and the epochs the GPU recipe's budget (10,000 positions per "
                         "arm, below) makes of it: cam 1,000 pieces (10.0 epochs); uni 500 pieces (20.0 epochs).")
    assert not any("epochs" in x for x in R.text_section(TEXT, None, 20, 10_000))


def test_the_instrument_section_ranks_and_compares_with_the_probe():
    probe = Ranking(R.PROBE_INSTRUMENT, {"cam": 1.3, "uni": 1.2}, False, replicates=({"cam": 1.31, "uni": 1.2},
                                                                                      {"cam": 1.29, "uni": 1.21}))
    found = [probe, Ranking("fertility (pieces/word)", {"cam": 1.5, "uni": 1.2}, False)]
    lines = R.instrument_section(METRICS, None, found, ["cam", "uni"], lowercased=("uni",))
    assert any(x.startswith("Intrinsic metrics: ") and "(uni lowercases it first" in x for x in lines)
    assert "| uni | pending | pending | 1.200 | 0.450 | n/a | 0.250 |" in lines
    assert f"- {R.PROBE_INSTRUMENT}, best first: uni > cam." in lines
    assert "- Probe, uni is better than cam: -0.100 bits/char [-0.109, -0.081] (95 % paired bootstrap over held-out " \
           "documents, seeds averaged)." in lines
    assert any(x.startswith("- fertility (pieces/word) against the probe") and x.endswith("both choose uni.")
               for x in lines)


def test_the_plan_section_from_numbers():
    cfg = AblationConfig(tokenizers=("a", "b"), corpus=("c.txt",), tasks=("e3c",), sizes=("small",),
                         pretraining=Pretraining(budget=1000, batch_size=60, seq_len=100, seeds=(0, 1)),
                         finetuning=Finetuning(seeds=(0, 1, 2)))
    t = {"positions": 1_000_000, "wall_s": 10.0, "device": "NVIDIA H200", "size": "small", "source": "x/ablation.json",
         "h200_positions_per_s": 100_000.0, "h100_positions_per_s": 69_791.7}
    rows = [{"job": "pretrain", "count": 4, "minutes": 2.0, "total_minutes": 8.0, "fits_a_piece": True},
            {"job": "finetune e3c", "count": 24, "minutes": 0.5, "total_minutes": 12.0, "fits_a_piece": True}]
    lines = R.plan_section(cfg, t, rows, 4)
    assert lines[2].startswith("BERT-small from scratch per vocabulary, 1,000 steps x 60 x 100 = 6,000,000 token "
                               "positions for every arm, pretraining seeds 0, 1 x fine-tuning seeds 0, 1, 2")
    assert "so 100,000 positions/s is a lower bound), x 0.70 for an H100" in lines[3] and "69,792 positions/s" in lines[3]
    assert "| finetune e3c | 24 | 0.50 | 12 | yes |" in lines
    assert lines[-2] == ("- Estimated: 20 GPU-minutes on one H100 run one job at a time; 11 minutes with the fine-tunes "
                         "packed 4 to the GPU. Every job fits one piece of at most 8 minutes, so a run cut at any point "
                         "loses at most one piece.")
    rows[0]["fits_a_piece"] = False
    assert R.plan_section(cfg, t, rows, 4)[-2].endswith("Some job does not fit one 8-minute piece.")


def test_publish_shows_the_plan_while_pending_and_names_the_setup(tmp_path):
    setup = R.PageSetup("A title", "python -m recipe --x", "the cache/", {"uni": ("unigram", True)}, 20, 10_000,
                        ("## The plan", ""))
    readme = R.publish(tmp_path / "page", setup, TEXT, METRICS, None, {"cam": "p", "uni": "q"}, tmp_path)
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# A title\n\nRegenerate everything here with one command (each phase is kept in the cache/, "
                           "a rerun resumes):\n\n```bash\npython -m recipe --x\n```\n")
    assert "Vocabularies: cam (its authors', general French web text), uni (unigram, lowercased)." in text
    assert "**Status: the GPU side is pending.**" in text and text.endswith("## The plan\n")
    assert "not recorded: text, vocabularies, intrinsic" in text and not (tmp_path / "page" / "cpu_seconds.json").exists()
    assert json.loads((tmp_path / "page" / "intrinsic.json").read_text(encoding="utf-8")) == METRICS
    assert not (tmp_path / "page" / "probe.json").exists() and not (tmp_path / "page" / "gpu").exists()


def test_the_main_source_share_and_its_held_out_lines_are_computed_from_the_record():
    text = {**TEXT, "sources": {"cases": {"kept": 30, "chars": 1_000}, "leaflets": {"kept": 170, "chars": 8_900},
                                "terms": {"kept": 40, "chars": 100}},
            "text": {"lines": 240, "chars": 10_000}, "heldout": {"lines": 12, "chars": 500}}
    m = R.main_source(text, 20)
    # held-out positions 20, 40, ..., 240: 20 in cases (1-30), 40..200 in leaflets (31-200), 220, 240 in terms
    assert (m["name"], m["chars"], m["share"], m["heldout_lines"]) == ("leaflets", 8_900, 0.89, 9)
    assert m["heldout_share"] == 0.75
    line = next(x for x in R.text_section({**text, "sources": {k: {**v, "lines_in": 0, "chars_in": 0, "excluded": 0,
                                                                    "matched": 0} for k, v in text["sources"].items()},
                                           "tasks": ["e3c"], "evaluated_sentences": 1},
                                          None, 20, 1000) if "of the text is one source" in x)
    assert line.startswith("- **89% of the text is one source**, leaflets: 0.0 M of its 0.0 M characters")
    assert "9 of the 12 held-out lines (75%) are leaflets too" in line and "(cases, terms) weigh 25%" in line


def _downstream(silent: bool) -> dict:
    arms = [{"name": n, "size": "small", "metrics": {"mcq": {"mean": v}}} for n, v in (("cam", 0.37), ("uni", 0.38))]
    checks = [{"size": "small", "task": "mcq", "arm": n, "beats_baseline": not silent and n == "uni"}
              for n in ("cam", "uni")]
    return {"tasks": {"mcq": {"name": "frenchmedmcqa", "metric": "hamming_score"}}, "arms": arms,
            "baselines": {"mcq": {"metric": "hamming_score", "rule": "always the answer set {a,b,c,d,e}",
                                  "test": 0.385}},
            "baseline_checks": checks, "no_signal": [{"size": "small", "task": "mcq"}] if silent else [],
            "recipe": {"confidence": 0.95},
            "per_pretrain_seed": [{"size": "small", "arm": n, "task": "mcq", "pretrain_seed": 0, "mean": m, "n": 3,
                                   "low": m - 0.01, "high": m + 0.01} for n, m in (("cam", 0.37), ("uni", 0.38))]}


def test_the_page_shows_trivial_baselines_no_signal_and_each_pretraining_seed():
    lines = R.baseline_lines(_downstream(True))
    assert ("| frenchmedmcqa (hamming_score) | always the answer set {a,b,c,d,e} | 0.385 | cam 0.370; uni 0.380 | "
            "0 of 2 | **no signal** |") in lines
    assert "| 1 of 2 | yes |" in R.baseline_lines(_downstream(False))[-2]
    seeds = R.per_seed_lines(_downstream(True))
    assert "| frenchmedmcqa | uni | 0.380 [0.370, 0.390] |" in seeds
    assert any(x.startswith("One pretraining seed is one draw of the pretraining, not the pretraining draw") for x in seeds)
    assert seeds[0].startswith("Per pretraining seed done so far (0): each arm's test score, mean over 3 fine-tuning")
    assert R.baseline_lines({"arms": []}) == [] and R.per_seed_lines({}) == []


def test_the_prediction_section_leaves_a_task_without_signal_out():
    d = {**_downstream(True), "comparisons": [], "floors": [], "costs": {"jobs": {}}}
    d["tasks"]["e3c"] = {"name": "e3c", "metric": "entity_f1"}
    for a, v in zip(d["arms"], (0.30, 0.40)):
        a["metrics"]["e3c"] = {"mean": v}
    probe = Ranking("probe", {"cam": 1.5, "uni": 1.6}, False)
    lines = R.prediction_section([probe], d, 2)
    assert "- Left out (**no signal**: no vocabulary beats the task's trivial baseline, below): frenchmedmcqa " \
           "(hamming_score)." in lines
    assert "- e3c (entity_f1), best first: uni > cam." in lines
    assert not any("frenchmedmcqa (hamming_score), best first" in x for x in lines)
    assert any(x.startswith("- probe would have chosen cam; the best on e3c (entity_f1) is uni") for x in lines)


def test_before_the_gpu_run_the_page_shows_each_tasks_trivial_baseline():
    bars = {"morfitt": {"metric": "weighted_f1_multilabel", "rule": "always all 12 train labels", "prediction": ["a"],
                        "train": 0.26, "dev": 0.2581, "test": 0.2544}}
    probe = Ranking("probe", {"cam": 1.5, "uni": 1.6}, False)
    lines = R.prediction_section([probe], None, 2, bars)
    assert "| morfitt | weighted_f1_multilabel | always all 12 train labels | 0.258 | 0.254 |" in lines
    assert any("will be marked **no signal** and left out of the Kendall tau" in x for x in lines)
    assert not any("| morfitt |" in x for x in R.prediction_section([probe], None, 2))  # none given: no table
    d = {**_downstream(True), "comparisons": [], "floors": [], "costs": {"jobs": {}}}
    assert not any("The bar each task sets" in x for x in R.prediction_section([probe], d, 2, bars))  # the ablation's own
