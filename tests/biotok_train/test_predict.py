"""Does an instrument's ranking predict a task's: Kendall tau, the choice, the sentences (synthetic rankings)."""

from __future__ import annotations

import math

import pytest

from biotok.errors import ConfigError
from biotok_train.predict import (
    Ranking, ablation_rankings, agreement, agreements, intrinsic_metrics, metric_rankings, probe_ranking,
    smallest_p_value, summary,
)

# bits per character: lower is better
PROBE = Ranking("probe", {"a": 1.50, "b": 1.55, "c": 1.70, "d": 1.90}, higher_is_better=False)


def task(scores: dict[str, float], tied: tuple[str, ...] = ()) -> Ranking:
    return Ranking("E3C NER", scores, higher_is_better=True, tied_with_best=tied)


def test_a_ranking_orders_by_its_direction():
    assert PROBE.order() == ["a", "b", "c", "d"] and PROBE.best() == "a"
    assert task({"a": 0.1, "b": 0.3, "c": 0.2}).order() == ["b", "c", "a"]
    assert task({"x": 0.5, "w": 0.5}).order() == ["w", "x"]  # ties by name


def test_the_same_order_is_tau_one_and_the_same_choice():
    a = agreement(PROBE, task({"a": 0.40, "b": 0.35, "c": 0.30, "d": 0.10}))
    assert a.tau == pytest.approx(1.0) and a.n == 4
    assert a.p_value == pytest.approx(2 / math.factorial(4))  # exact test: 2 orders of 24 are as extreme
    assert a.same_choice and a.acceptable_choice
    assert a.sentence() == ("probe would have chosen a, the best vocabulary on E3C NER too: the laptop verdict is the "
                            "downstream one; Kendall tau +1.00 (p = 0.083, 4 vocabularies).")


def test_the_reverse_order_is_tau_minus_one_and_another_choice():
    a = agreement(PROBE, task({"a": 0.10, "b": 0.30, "c": 0.35, "d": 0.40}))
    assert a.tau == pytest.approx(-1.0) and a.choice == "a" and a.task_best == "d"
    assert not a.same_choice and not a.acceptable_choice
    assert "a is worse than it: the laptop verdict would have chosen another vocabulary" in a.sentence()


def test_a_choice_the_task_cannot_tell_from_its_best_is_acceptable():
    a = agreement(PROBE, task({"a": 0.39, "b": 0.40, "c": 0.30, "d": 0.10}, tied=("a",)))
    assert a.tau == pytest.approx(2 / 3) and a.task_best == "b" and a.acceptable == ("a", "b")
    assert not a.same_choice and a.acceptable_choice
    assert "which the downstream result cannot tell from a" in a.sentence()


def test_only_the_vocabularies_both_rank_count():
    a = agreement(PROBE, task({"b": 0.2, "c": 0.1, "z": 0.9}))
    assert a.n == 2 and a.tau == pytest.approx(1.0) and a.choice == "b" and a.task_best == "b"
    with pytest.raises(ConfigError, match="no vocabulary in common"):
        agreement(PROBE, task({"z": 0.9}))


def test_one_vocabulary_or_a_constant_ranking_has_no_tau():
    a = agreement(PROBE, task({"a": 0.5}))
    assert a.tau is None and a.p_value is None and "Kendall tau undefined (1 vocabularies" in a.sentence()
    flat = agreement(PROBE, task({"a": 0.5, "b": 0.5, "c": 0.5}))
    assert flat.tau is None


def test_replicates_give_a_tau_interval():
    reps = tuple({"a": 0.40, "b": 0.35 + d, "c": 0.30, "d": 0.10} for d in (0.0, 0.0, 0.1, 0.1))
    t = Ranking("E3C NER", {"a": 0.40, "b": 0.35, "c": 0.30, "d": 0.10}, True, replicates=reps)
    a = agreement(PROBE, t)
    # two replicates keep the order (tau 1), two swap a and b (tau 2/3)
    assert a.tau_interval == (pytest.approx(2 / 3), pytest.approx(1.0))
    assert "Kendall tau +1.00 [+0.67, +1.00] (p = 0.083" in a.sentence()
    assert agreement(PROBE, task({"a": 1.0, "b": 0.0})).tau_interval is None


def test_every_instrument_against_every_task_and_the_summary():
    tasks = [task({"a": 0.4, "b": 0.3, "c": 0.2, "d": 0.1}), Ranking("MORFITT", {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}, True)]
    fertility = Ranking("fertility", {"a": 1.2, "b": 1.1, "c": 1.3, "d": 1.4}, False)
    found = agreements([PROBE, fertility], tasks)
    assert [(a.instrument, a.task) for a in found] == [("probe", "E3C NER"), ("probe", "MORFITT"),
                                                        ("fertility", "E3C NER"), ("fertility", "MORFITT")]
    assert summary(found) == ("Over 4 instrument-task pairs, the laptop verdict chose the downstream best 1 times, a "
                              "vocabulary the downstream result cannot tell from its best 0 more times, and another "
                              "vocabulary 3 times; tau is positive in 2 of 4 pairs.")
    assert summary([]) == "No instrument was compared with a downstream result."


def test_bad_rankings_are_refused():
    with pytest.raises(ConfigError, match="scores no vocabulary"):
        Ranking("x", {}, True)
    with pytest.raises(ConfigError, match="not a finite number"):
        Ranking("x", {"a": float("nan")}, True)
    with pytest.raises(ConfigError, match="at least 2"):
        smallest_p_value(1)
    assert smallest_p_value(5) == pytest.approx(2 / 120)


def _probe(bits: dict[str, list[list[float]]], chars: list[float]) -> tuple[dict, list[dict]]:
    """A probe.json and its runs: per arm, per seed, each held-out document's bits."""
    total = sum(chars)
    arms = [{"name": a, "bits_per_char": {"mean": sum(sum(b) / total for b in per_seed) / len(per_seed)}}
            for a, per_seed in bits.items()]
    runs = [{"tokenizer": a, "seed": s, "doc_bits": b} for a, per_seed in bits.items() for s, b in enumerate(per_seed)]
    return {"setup": {"seeds": list(range(len(next(iter(bits.values())))))}, "arms": arms}, runs


def test_probe_ranking_resamples_documents_for_every_arm_at_once():
    chars = [100.0, 200.0, 100.0]
    probe, runs = _probe({"a": [[150, 300, 150], [160, 290, 150]], "b": [[200, 400, 200], [200, 400, 200]]}, chars)
    r = probe_ranking("probe", probe, runs, chars, n_resamples=50)
    assert r.best() == "a" and r.scores["b"] == pytest.approx(2.0) and len(r.replicates) == 50
    # b is worse than a on every document, so every replicate keeps the order
    assert all(rep["a"] < rep["b"] for rep in r.replicates)
    assert r.replicates == probe_ranking("probe", probe, runs, chars, n_resamples=50).replicates  # seeded


def test_probe_ranking_refuses_characters_that_are_not_the_probes():
    probe, runs = _probe({"a": [[150, 300, 150]]}, [100.0, 200.0, 100.0])
    with pytest.raises(ConfigError, match="do not match"):
        probe_ranking("probe", probe, runs, [100.0, 200.0, 101.0])
    with pytest.raises(ConfigError, match="do not match"):
        probe_ranking("probe", probe, runs, [100.0, 300.0])


def test_downstream_rankings_from_an_ablation_result():
    def arm(name, e3c, size="small", init="scratch"):
        return {"name": name, "size": size, "init": init, "metrics": {"e3c": {"mean": e3c}, "morfitt": {"mean": 1 - e3c}}}

    def cmp(ref, cand, verdict, task="e3c", size="small"):
        return {"task": task, "size": size, "reference_arm": ref, "candidate_arm": cand, "verdict": verdict}

    ablation = {"tasks": {"e3c": {"name": "e3c", "metric": "entity_f1"}, "morfitt": {"name": "morfitt", "metric": "f1"}},
                "arms": [arm("a", 0.30), arm("b", 0.35), arm("c", 0.20), arm("b", 0.90, size="tiny")],
                "comparisons": [cmp("a", "b", "indistinguishable"), cmp("a", "c", "worse"), cmp("b", "c", "worse"),
                                cmp("a", "b", "better", task="morfitt"), cmp("a", "b", "indistinguishable", size="tiny")]}
    e3c, morfitt = ablation_rankings(ablation)
    assert e3c.name == "e3c (entity_f1)" and e3c.best() == "b" and e3c.tied_with_best == ("a",)
    assert morfitt.best() == "c" and morfitt.tied_with_best == ()
    a = agreement(PROBE, e3c)  # the probe chooses a, the task b, which it cannot tell from a
    assert a.acceptable_choice and not a.same_choice
    assert ablation_rankings(ablation, size="tiny")[0].scores == {"b": 0.90}
    flat = {**ablation, "arms": [arm("a", 0.5), arm("b", 0.5)], "comparisons": [cmp("b", "a", "indistinguishable")]}
    e3c = ablation_rankings(flat)[0]
    assert e3c.best() == "a" and e3c.tied_with_best == ("b",)  # the best never listed as tied with itself


def test_every_pair_with_its_interval_over_replicates():
    from biotok_train.predict import pairs

    reps = tuple({"a": 1.50 + e, "b": 1.52 - e, "c": 1.90 + e} for e in (-0.03, -0.01, 0.0, 0.01, 0.03))
    r = Ranking("probe", {"a": 1.50, "b": 1.52, "c": 1.90}, False, replicates=reps)
    ab, ac, bc = pairs(r, confidence=0.5)
    assert (ab.first, ab.second, ac.second, bc.first) == ("a", "b", "c", "b")
    assert ab.verdict == "indistinguishable from" and ab.difference == pytest.approx(-0.02)
    assert ac.verdict == "better than" and ac.sentence(" bits/char").startswith("a is better than c: -0.400 bits/char [")
    flipped = Ranking("f1", {"a": 0.3, "b": 0.1}, True, replicates=({"a": 0.3, "b": 0.1}, {"a": 0.2, "b": 0.1}))
    assert pairs(flipped)[0].verdict == "better than"
    assert pairs(Ranking("x", {"a": 1.0, "b": 2.0}, True)) == []


def test_the_intrinsic_metrics_rank_by_their_direction():
    metrics = {"a": {"fertility": 1.2, "renyi_efficiency": 0.40, "zipf": {"r2": 0.95}},
               "b": {"fertility": 1.5, "renyi_efficiency": 0.45, "zipf": None}}
    fert, renyi, zipf = metric_rankings(metrics)
    assert fert.order() == ["a", "b"] and not fert.higher_is_better  # fewer pieces per word is better
    assert renyi.order() == ["b", "a"] and renyi.higher_is_better
    assert zipf.scores == {"a": 0.95}  # a vocabulary without a fit is left out


def test_intrinsic_metrics_on_the_heldout_and_pieces_of_the_pretraining_text(tmp_path, sample_lines, tiny_unigram,
                                                                              tiny_wordpiece):
    (tmp_path / "held.txt").write_text("\n".join(sample_lines[:20]) + "\n", encoding="utf-8")
    (tmp_path / "pre.txt").write_text("\n".join(sample_lines[20:60]) + "\n", encoding="utf-8")
    m = intrinsic_metrics({"uni": str(tiny_unigram), "wp": str(tiny_wordpiece)}, tmp_path / "held.txt",
                          tmp_path / "pre.txt")
    assert list(m) == ["uni", "wp"]
    for r in m.values():
        assert r["fertility"] >= 1 and 0 < r["renyi_efficiency"] <= 1 and r["pretrain_pieces"] > 0
        assert r["zipf"] is None or set(r["zipf"]) >= {"r2", "exponent"}
    words = sum(len(line.split()) for line in sample_lines[20:60])
    assert all(m[n]["pretrain_pieces"] >= words * 0.9 for n in m)  # at least about a piece a word
    assert m["uni"]["pretrain_pieces"] != m["wp"]["pretrain_pieces"]


def test_a_task_without_signal_has_no_ranking_and_stays_out_of_the_tau():
    from biotok_train.predict import no_signal

    def arm(name, e3c, size="small"):
        return {"name": name, "size": size, "init": "scratch",
                "metrics": {"e3c": {"mean": e3c}, "mcq": {"mean": 0.37 + e3c / 100}}}

    ablation = {"tasks": {"e3c": {"name": "e3c", "metric": "entity_f1"}, "mcq": {"name": "mcq", "metric": "hamming"}},
                "arms": [arm("a", 0.30), arm("b", 0.35), arm("b", 0.9, size="tiny")], "comparisons": [],
                "no_signal": [{"size": "small", "task": "mcq"}]}
    assert no_signal(ablation) == ["mcq"] and no_signal(ablation, "tiny") == []
    (e3c,) = ablation_rankings(ablation)
    assert e3c.name == "e3c (entity_f1)"
    assert [t.name for t in ablation_rankings(ablation, "tiny")] == ["e3c (entity_f1)", "mcq (hamming)"]
    found = agreements([PROBE], ablation_rankings(ablation))
    assert [a.task for a in found] == ["e3c (entity_f1)"]
    assert no_signal({**ablation, "no_signal": []}) == [] and no_signal({"arms": [], "tasks": {}}) == []
