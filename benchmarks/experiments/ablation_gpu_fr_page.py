"""The page of a prediction experiment (issue 32, docs/results/ablation-gpu-fr/): the pretraining
text, the cheap instruments' rankings of the vocabularies (the causal-LM probe, the intrinsic
metrics), the GPU ablation's downstream rankings and whether the first predict the second, and
the GPU plan while that ablation is pending. Every sentence is computed from the records.

The experiment's folder ``work`` holds text/probe_heldout.txt (the probe's held-out sample),
probe/ (the probe's runs and timings.json), gpu/ (the ablation's files) and cpu_seconds.json
(each CPU phase's seconds).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from biotok_train.ablate.estimate import H100_OVER_H200, JOB_OVERHEAD_S
from biotok_train.ablate.config import AblationConfig
from biotok_train.predict import (
    Ranking, ablation_rankings, agreement, agreements, metric_rankings, no_signal, pairs, probe_ranking, smallest_p_value,
    summary,
)
from biotok_train.probe import data as D
from biotok_train.probe.run import load_tokenizer
from biotok_train.stats import SeedSummary

PROBE_INSTRUMENT = "the causal-LM probe (fair, bits/char)"
PHASES = ("text", "vocabularies", "intrinsic")  # the CPU phases timed in cpu_seconds.json (the probe: its timings)


@dataclass(frozen=True)
class PageSetup:
    """What the page says about the recipe beside its records."""

    title: str
    command: str  # the command that regenerates the page
    workdir: str  # where the recipe keeps its phases, as the page names it
    kinds: Mapping[str, tuple[str, bool]]  # the trained vocabularies: name -> (algorithm, lowercased)
    heldout_every: int  # each n-th line of the text held out
    positions: int  # token positions per arm of the GPU recipe
    plan: Sequence[str] = field(default=())  # the GPU plan's lines, shown while some of it is not done
    # each task's trivial baseline (TrivialBaseline.to_dict() by task key), the bar shown before the GPU run
    baselines: Mapping[str, dict] = field(default_factory=dict)


def probe_chars(tokenizers: Sequence[str], heldout: Path) -> list[int]:
    """Each held-out document's characters as the fair-mode probe scores them."""
    how = D.fair_transform([D.normalization(load_tokenizer(p)) for p in tokenizers])
    return [len(D.transform(d, how)) for d in D.read_documents([str(heldout)], None, "--heldout")]


def instruments(metrics: dict | None, probe_result: dict | None, work: Path, vocabs: dict[str, str]) -> list[Ranking]:
    """One ranking per cheap instrument that has run (the probe's with bootstrap replicates over
    held-out documents, from its runs' records)."""
    out = []
    if probe_result is not None:
        runs = [json.loads(f.read_text(encoding="utf-8")) for f in sorted((work / "probe" / "runs").glob("*/seed*.json"))]
        chars = probe_chars(list(vocabs.values()), work / "text" / "probe_heldout.txt")
        out.append(probe_ranking(PROBE_INSTRUMENT, probe_result, runs, chars))
    return out + (metric_rankings(metrics) if metrics is not None else [])


def main_source(text: dict, heldout_every: int) -> dict:
    """The largest source of the pretraining text (text.json): its characters and share of the
    text, and how many of the held-out lines are its own (each ``heldout_every``-th kept line, the
    sources kept in their order)."""
    sources = text["sources"]
    name = max(sources, key=lambda n: sources[n]["chars"])
    start = 0
    for n, r in sources.items():  # the held-out positions i (from 1) with i % every == 0 inside this source
        if n == name:
            held = (start + r["kept"]) // heldout_every - start // heldout_every
            break
        start += r["kept"]
    return {"name": name, "chars": sources[name]["chars"], "share": sources[name]["chars"] / text["text"]["chars"],
            "heldout_lines": held, "heldout_share": held / max(1, text["heldout"]["lines"])}


def text_section(text: dict, metrics: dict | None, heldout_every: int, positions: int) -> list[str]:
    """The pretraining text: each source, what was left out, the split, its size in pieces."""
    rows = ["| source | lines in | characters in | lines excluded | evaluated sentences found | characters kept |",
            "|---|---:|---:|---:|---:|---:|"]
    rows += [f"| {n} | {r['lines_in']:,} | {r['chars_in']:,} | {r['excluded']:,} | {r['matched']:,} | {r['chars']:,} |"
             for n, r in text["sources"].items()]
    excluded = sum(r["excluded"] for r in text["sources"].values())
    lines = ["## The pretraining text", "", *rows, "",
             f"- {excluded:,} lines left out because they are or contain one of the {text['evaluated_sentences']:,} dev "
             f"and test sentences of {', '.join(text['tasks'])} (`biotok_train.pretrain.exclude.eval_sentences`, "
             f"normalised comparison); a sentence of fewer than {text['min_words']} words (an answer option, a term, "
             "a header) removes only a line that is exactly it.",
             f"- In all {text['text']['chars']:,} characters in {text['text']['lines']:,} lines; each {heldout_every}th "
             f"line held out as `ablate` does: pretraining part {text['pretrain']['chars']:,} characters, held-out "
             f"part {text['heldout']['chars']:,}. Every vocabulary is trained on the pretraining part only."]
    m = main_source(text, heldout_every)
    lines.append(f"- **{m['share']:.0%} of the text is one source**, {m['name']}: {m['chars'] / 1e6:.1f} M of its "
                 f"{text['text']['chars'] / 1e6:.1f} M characters. The held-out lines are every {heldout_every}th line "
                 f"in source order, so {m['heldout_lines']:,} of the {text['heldout']['lines']:,} held-out lines "
                 f"({m['heldout_share']:.0%}) are {m['name']} too: the held-out [MASK] loss and top-1 measure "
                 f"mostly how well each vocabulary's model predicts that text's French; the other sources ("
                 + ", ".join(n for n in text["sources"] if n != m["name"])
                 + f") weigh {1 - m['heldout_share']:.0%} of those lines.")
    if metrics is not None:
        lines.append(f"- Its pretraining part in pieces, and the epochs the GPU recipe's budget ({positions:,} positions "
                     "per arm, below) makes of it: "
                     + "; ".join(f"{n} {m['pretrain_pieces']:,} pieces ({positions / m['pretrain_pieces']:.1f} epochs)"
                                 for n, m in metrics.items()) + ".")
    return lines + [""]


def _instrument_table(metrics: dict | None, probe_result: dict | None, names: list[str]) -> list[str]:
    arms = {a["name"]: a for a in (probe_result or {}).get("arms", [])}
    lines = ["| vocabulary | probe bits/char | vs unigram floor [95 % CI] | fertility | Rényi efficiency | "
             "Zipf R² (exponent) | pieces/char |", "|---|---:|---:|---:|---:|---:|---:|"]
    for n in names:
        a, m = arms.get(n), (metrics or {}).get(n)
        probe_cells = (f"{SeedSummary.from_dict(a['bits_per_char']).format()} | {a['versus_floor']['difference']:+.3f} "
                       f"[{a['versus_floor']['low']:+.3f}, {a['versus_floor']['high']:+.3f}]") if a else "pending | pending"
        metric_cells = (f"{m['fertility']:.3f} | {m['renyi_efficiency']:.3f} | "
                        + (f"{m['zipf']['r2']:.3f} ({m['zipf']['exponent']:.2f})" if m["zipf"] else "n/a")
                        + f" | {1 / m['chars_per_piece']:.3f}") if m else "pending | pending | pending | pending"
        lines.append(f"| {n} | {probe_cells} | {metric_cells} |")
    return lines + [""]


def instrument_section(metrics: dict | None, probe_result: dict | None, found: list[Ranking], names: list[str],
                       lowercased: Sequence[str] = ()) -> list[str]:
    """The probe's setup, each instrument's numbers and ranking, the probe's pairs, and each
    metric's agreement with the probe (``lowercased``: the vocabularies that lowercase the text)."""
    lines = ["## The cheap instruments", ""]
    if probe_result is not None:
        st = probe_result["setup"]
        lines += [f"Causal-LM probe, fair mode ({st['text']}): GPT-2 {st['model']['layers']} layers x "
                  f"{st['model']['hidden']}, {st['steps']} steps x {st['batch_size']} x {st['seq_len']} = "
                  f"{st['tokens_per_arm']:,} training tokens per vocabulary and seed, seeds "
                  f"{', '.join(map(str, st['seeds']))}; trained on {st['train_chars']:,} characters (every k-th "
                  f"line of the pretraining part), scored on {st['heldout_chars']:,} ({st['heldout_documents']:,} "
                  "lines of the held-out part).", ""]
    if metrics is not None:
        lower = [n for n in names if n in lowercased]
        lines += ["Intrinsic metrics: `biotok compare` on the whole held-out part, raw text as `compare` reads it"
                  + (f" ({', '.join(lower)} lowercases it first: fewer forms to cover, which lowers its fertility; "
                     "the probe, in fair mode, does not give it that advantage)" if lower else "") + ".", ""]
    lines += _instrument_table(metrics, probe_result, names)
    lines += [f"- {r.name}, best first: {' > '.join(r.order())}." for r in found]
    for r in found:
        lines += [f"- Probe, {p.sentence(' bits/char')} (95 % paired bootstrap over held-out documents, seeds averaged)."
                  for p in pairs(r)]
    probe = [r for r in found if "probe" in r.name]
    for other in (r for r in found if "probe" not in r.name) if probe else ():
        a = agreement(other, probe[0])
        lines.append(f"- {other.name} against the probe (interval: bootstrap over the probe's held-out documents): "
                     f"{a.tau_text()}; "
                     + (f"both choose {a.choice}" if a.same_choice else
                        f"it chooses {a.choice}, the probe {a.task_best}") + ".")
    return lines + [""]


def prediction_section(found: list[Ranking], downstream: dict | None, n: int,
                       baselines: Mapping[str, dict] | None = None) -> list[str]:
    """Each instrument against each task of the GPU ablation, or what will be tested (with each
    task's trivial ``baselines``, the bar its arms must clear)."""
    lines = ["## Does the laptop verdict predict the downstream one?", ""]
    if downstream is None:
        lines += ["Pending the GPU run. For each task, the downstream ranking (mean over pretraining x fine-tuning "
                  "seeds) will be compared with each instrument's: Kendall tau with its p-value and the number of "
                  "vocabularies (`biotok_train.predict.agreement`), and a sentence saying whether the instrument's "
                  "choice is the downstream best or one the paired bootstrap cannot tell from it. "
                  + ("The laptop verdicts to be tested: " + "; ".join(f"{r.name} chooses {r.best()}" for r in found)
                     + "." if found else "No instrument has run yet.")]
        lines += pending_baseline_lines(baselines or {})
    else:
        tasks = ablation_rankings(downstream)
        silent = no_signal(downstream)
        if silent:
            names = downstream["tasks"]
            lines.append("- Left out (**no signal**: no vocabulary beats the task's trivial baseline, below): "
                         + ", ".join(f"{names[t]['name']} ({names[t]['metric']})" for t in silent) + ".")
        lines += [f"- {t.name}, best first: {' > '.join(t.order())}"
                  + (f" ({', '.join(t.tied_with_best)} cannot be told from {t.best()})" if t.tied_with_best else "")
                  + "." for t in tasks]
        found_pairs = agreements(found, tasks)
        lines += [f"- {a.sentence()}" for a in found_pairs] + ["", f"**In one line**: {summary(found_pairs)}", ""]
        lines += downstream_details(downstream)
    if n > 1:
        lines += ["", f"With {n} vocabularies, even a perfect agreement has p = {smallest_p_value(n):.3f} (exact "
                  "test): this experiment can show agreement and the choice, not significance at 5 %."]
    return lines + [""]


def pending_baseline_lines(baselines: Mapping[str, dict]) -> list[str]:
    """Before the GPU run: each task's trivial baseline, the bar an arm must clear for the task to
    carry a signal (a task no arm clears is marked "no signal" and left out of the Kendall tau)."""
    if not baselines:
        return []
    lines = ["", "The bar each task sets: its trivial baseline, the best constant answer chosen on train with the "
             "task's own metric (no model). A task on which no vocabulary's model beats it (paired bootstrap over "
             "test examples) will be marked **no signal** and left out of the Kendall tau.", "",
             "| task | metric | trivial answer | dev | test |", "|---|---|---|---:|---:|"]
    lines += [f"| {key} | {b['metric']} | {b['rule']} | {b['dev']:.3f} | {b['test']:.3f} |"
              for key, b in baselines.items()]
    return lines


def baseline_lines(d: dict) -> list[str]:
    """Each task's trivial baseline beside the arms' test scores, and "no signal" where no arm beats it."""
    if not d.get("baselines"):
        return []
    size = d["arms"][0]["size"] if d.get("arms") else None
    silent = set(no_signal(d, size))
    lines = ["Trivial baselines: the best constant answer of each task, chosen on train with the task's own metric "
             "(no model); an arm beats it when its paired bootstrap interval over test examples lies above it.", "",
             "| task | trivial answer | baseline (test) | arms (test, mean over seeds) | arms that beat it | signal |",
             "|---|---|---:|---|---|---|"]
    for key, b in d["baselines"].items():
        arms = [a for a in d["arms"] if a["size"] == size and key in a["metrics"]]
        checks = [c for c in d.get("baseline_checks", []) if c["task"] == key and c["size"] == size]
        beat = [c["arm"] for c in checks if c["beats_baseline"]]
        lines.append(f"| {d['tasks'][key]['name']} ({b['metric']}) | {b['rule']} | {b['test']:.3f} | "
                     + "; ".join(f"{a['name']} {a['metrics'][key]['mean']:.3f}" for a in arms)
                     + f" | {len(beat)} of {len(checks)} | " + ("**no signal**" if key in silent else "yes") + " |")
    return lines + [""]


def per_seed_lines(d: dict) -> list[str]:
    """Each arm's test score per pretraining seed done so far: mean and t-interval over the
    fine-tuning seeds, and what one pretraining seed does not say."""
    rows = d.get("per_pretrain_seed") or []
    if not rows:
        return []
    seeds = sorted({r["pretrain_seed"] for r in rows})
    conf = d.get("recipe", {}).get("confidence", 0.95)
    nf = max(r["n"] for r in rows)
    lines = [f"Per pretraining seed done so far ({', '.join(map(str, seeds))}): each arm's test score, mean over "
             f"{nf} fine-tuning seeds with its {conf:.0%} t-interval over them.", "",
             "| task | arm | " + " | ".join(f"pretraining seed {p}" for p in seeds) + " |",
             "|---|---|" + "---|" * len(seeds)]
    names = d["tasks"]
    for key in dict.fromkeys(r["task"] for r in rows):
        for arm in dict.fromkeys(r["arm"] for r in rows if r["task"] == key):
            cells = []
            for p in seeds:
                r = next((r for r in rows if r["task"] == key and r["arm"] == arm and r["pretrain_seed"] == p), None)
                cells.append("" if r is None else f"{r['mean']:.3f}" + (
                    f" [{r['low']:.3f}, {r['high']:.3f}]" if r.get("low") is not None else ""))
            lines.append(f"| {names[key]['name']} | {arm} | " + " | ".join(cells) + " |")
    lines += ["", ("One pretraining seed is one draw of the pretraining, not the pretraining draw: these intervals "
                   "hold the fine-tuning seeds' spread only, and another pretraining of the same arm can land outside "
                   "them." if len(seeds) == 1 else
                   f"Each interval holds one pretraining seed's fine-tuning spread only; the {len(seeds)} pretraining "
                   "seeds side by side show how far the pretraining draw moves a score."), ""]
    return lines


def downstream_details(d: dict) -> list[str]:
    """Trivial baselines, each pretraining seed's scores, every pair on every task, the floors, and
    what the GPU side took (from its records)."""
    lines = [*baseline_lines(d), *per_seed_lines(d)]
    lines += ["The downstream verdicts, every pair of vocabularies (paired bootstrap over test examples, seeds "
              "pooled):", ""]
    lines += [f"- {c['task']}: {c['candidate_arm']} minus {c['reference_arm']} {c['difference']:+.3f} "
              f"[{c['low']:+.3f}, {c['high']:+.3f}]: {c['verdict']}." for c in d["comparisons"] if c["task"] != "mlm"]
    beat = [f for f in d.get("floors", []) if f.get("beats_floor")]
    lines += ["", f"- {len(beat)} of {len(d.get('floors', []))} arm-task pairs beat their random-init floor."]
    by_device: dict[str, float] = {}
    for j in d["costs"]["jobs"].values():
        by_device[j["device"]] = by_device.get(j["device"], 0.0) + j["wall_s"]
    lines.append("- The GPU ablation's jobs took " + ", ".join(f"{s / 60:.1f} minutes on {dev}" for dev, s in
                                                               sorted(by_device.items()))
                 + " (costs.json; the ablation's own report: gpu/ablation.md).")
    if d.get("pieces"):
        cards = sorted({p.get("device", "?") for p in d["pieces"]})
        lines.append(f"- Pretraining seeds in these verdicts: {', '.join(map(str, d.get('pretrain_seeds', [])))}; from "
                     f"{len(d['pieces'])} pieces run in short slots on {' and '.join(cards)} "
                     f"({sum(p.get('wall_s', 0) for p in d['pieces']) / 60:.1f} minutes in all; downstream.json: "
                     "each piece's device, wall time and arithmetic).")
    return lines + [""]


def cpu_sentence(spent: dict, probe_cpu: float, runs: int) -> str:
    """What the CPU side took, phase by phase (cpu_seconds.json; the probe's runs: timings.json)."""
    parts = [f"{p} {spent[p] / 60:.1f}" for p in PHASES if p in spent] + [f"probe ({runs} runs) {probe_cpu / 60:.1f}"]
    missing = [p for p in PHASES if p not in spent]
    return (f"The CPU side took {(sum(spent.get(p, 0) for p in PHASES) + probe_cpu) / 60:.0f} CPU-minutes on a "
            f"shared 2-core machine ({', '.join(parts)})"
            + (f"; not recorded: {', '.join(missing)} (a phase is timed the first time it runs)" if missing else "")
            + ".")


def timed_phase(work: Path, phase: str, done: Path, fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn(*args)``; when ``done`` (what the phase writes) was not there before, record the
    phase's CPU seconds in work/cpu_seconds.json, which :func:`cpu_sentence` reads (a phase found
    finished costs nothing new)."""
    ran = not done.exists()
    t = time.process_time()
    out = fn(*args)
    path = work / "cpu_seconds.json"
    spent = _read(path)  # read after: a rebuilt text resets it
    if ran:
        spent[phase] = time.process_time() - t
        path.write_text(json.dumps(spent, indent=1) + "\n", encoding="utf-8")
    return out


def plan_section(cfg: AblationConfig, t: dict, rows: list[dict], packed: int) -> list[str]:
    """The GPU ablation's recipe ``cfg`` and its estimated GPU-minutes (``rows``: from
    :func:`~biotok_train.ablate.estimate.gpu_plan` at the throughput ``t``; ``packed``: fine-tunes
    sharing one GPU), in words and a table."""
    total = sum(r["total_minutes"] for r in rows)
    pre = sum(r["total_minutes"] for r in rows if r["job"] == "pretrain")
    lines = ["## The GPU side: its recipe and estimated cost", "",
             f"BERT-{cfg.sizes[0]} from scratch per vocabulary, {cfg.pretraining.budget:,} steps x {cfg.pretraining.batch_size} x {cfg.pretraining.seq_len} "
             f"= {cfg.tokens_per_arm:,} token positions for every arm, pretraining seeds "
             f"{', '.join(map(str, cfg.pretraining.seeds))} x fine-tuning seeds {', '.join(map(str, cfg.finetuning.seeds))}, every "
             f"task also fine-tuned from a random-init model (the floor); the verdicts wanted: a paired bootstrap between "
             "every pair of vocabularies on every task.",
             f"Throughput: {t['positions']:,} positions in {t['wall_s']:.1f} s on one {t['device']} in the GPU suite's "
             f"BERT-{t['size']} ablation (`{t['source']}`; its whole wall time, so {t['h200_positions_per_s']:,.0f} "
             f"positions/s is a lower bound), x {H100_OVER_H200:.2f} for an H100 (memory bandwidth 3.35 against 4.8 "
             f"TB/s, the same bf16 peak): {t['h100_positions_per_s']:,.0f} positions/s; {JOB_OVERHEAD_S:.0f} s of "
             "start-up per job (an assumption).", "",
             "| job | count | GPU-minutes each (H100) | GPU-minutes in all | one piece of at most 8 minutes |",
             "|---|---:|---:|---:|---|"]
    lines += [f"| {r['job']} | {r['count']} | {r['minutes']:.2f} | {r['total_minutes']:.0f} | "
              f"{'yes' if r['fits_a_piece'] else 'no'} |" for r in rows]
    lines += ["", f"- Estimated: {total:.0f} GPU-minutes on one H100 run one job at a time; "
              f"{pre + (total - pre) / packed:.0f} minutes with the fine-tunes packed {packed} to the GPU. "
              + ("Every job fits one piece of at most 8 minutes, so a run cut at any point loses at most one piece."
                 if all(r["fits_a_piece"] for r in rows) else "Some job does not fit one 8-minute piece."), ""]
    return lines


def _head(setup: PageSetup, text: dict, vocabs: dict[str, str], spent: dict, timings: dict, pending: bool) -> list[str]:
    """The title, the command, the CPU cost, the status and the vocabularies."""
    probe_cpu = sum(t["train_cpu_s"] + t["eval_cpu_s"] for t in timings.values())
    kinds = setup.kinds
    return [f"# {setup.title}", "", f"Regenerate everything here with one command (each phase is kept in "
            f"{setup.workdir}, a rerun resumes):", "", "```bash", setup.command, "```", "",
            cpu_sentence(spent, probe_cpu, len(timings)), "",
            *(["**Status: the GPU side is pending.** No downstream result exists yet (BERT-small pretrained from "
               "scratch on this text, fine-tuned on " + ", ".join(text["tasks"]) + "): this page shows the cheap "
               "instruments' side, the rankings the downstream ones will be tested against.", ""] if pending else []),
            "Vocabularies: " + ", ".join(f"{k} ({kinds[k][0]}, {'lowercased' if kinds[k][1] else 'cased'})"
                                         if k in kinds else f"{k} (its authors', general French web text)"
                                         for k in vocabs) + ".", ""]


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def publish(dest: Path, setup: PageSetup, text: dict, metrics: dict | None, probe_result: dict | None,
            vocabs: dict[str, str], work: Path, downstream: dict | None = None) -> Path:
    """README.md (every sentence from the numbers) and the numbers it reads, into ``dest``;
    ``downstream``: the GPU ablation's result with every pair compared, once it exists."""
    found = instruments(metrics, probe_result, work, vocabs)
    spent, timings = _read(work / "cpu_seconds.json"), _read(work / "probe" / "timings.json")
    lines = _head(setup, text, vocabs, spent, timings, downstream is None)
    lines += text_section(text, metrics, setup.heldout_every, setup.positions)
    lines += instrument_section(metrics, probe_result, found, list(vocabs), [k for k, v in setup.kinds.items() if v[1]])
    lines += prediction_section(found, downstream, len(vocabs), setup.baselines)
    lines += list(setup.plan)
    dest.mkdir(parents=True, exist_ok=True)
    for name, obj in (("text.json", text), ("intrinsic.json", metrics), ("probe.json", probe_result),
                      ("timings.json", timings or None)):
        if obj is not None:
            (dest / name).write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if downstream is not None:
        (dest / "gpu").mkdir(exist_ok=True)
        for name in ("ablation.md", "ablation.json", "costs.json", "ablation.png"):
            if (work / "gpu" / name).is_file():
                shutil.copyfile(work / "gpu" / name, dest / "gpu" / name)
        (dest / "downstream.json").write_text(json.dumps(downstream, indent=1) + "\n", encoding="utf-8")
    if spent:
        (dest / "cpu_seconds.json").write_text(json.dumps(spent, indent=1) + "\n", encoding="utf-8")
    (dest / "README.md").write_text("\n".join(lines), encoding="utf-8")
    return dest / "README.md"


__all__ = ["PHASES", "PROBE_INSTRUMENT", "PageSetup", "baseline_lines", "cpu_sentence", "downstream_details",
           "instrument_section", "main_source", "per_seed_lines",
           "instruments", "plan_section", "prediction_section", "probe_chars", "publish", "text_section", "timed_phase"]
