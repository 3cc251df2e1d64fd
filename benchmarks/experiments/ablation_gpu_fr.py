"""AliBERT's question on one GPU (issue 32): French vocabularies pretrained from scratch, and
does the laptop's verdict predict the downstream one? This is the pretraining text, the vocabularies,
the cheap instruments that each rank them, and the GPU ablation they are tested against.

    python -m benchmarks.experiments.ablation_gpu_fr              # the CPU side: rewrites docs/results/ablation-gpu-fr/
    python -m benchmarks.experiments.ablation_gpu_fr --gpu --engine ray --gpus-per-job 0.25   # then the GPU side (resumable)
    python -m benchmarks.experiments.ablation_gpu_fr --plan       # the GPU side's estimated GPU-minutes
    python -m benchmarks.experiments.ablation_gpu_fr --dry-run    # every piece at toy size on a CPU (a few minutes)

Phases, each kept in benchmarks/.data/ablation_gpu_fr/ (a rerun skips what is done):
(1) text: E3C PAMJ clinical cases (a document a line), E3C drug leaflets cut into sentences and
de-duplicated, WMT-biomed French abstracts, CIM-10 labels; minus every line that is or contains
a dev or test sentence of the evaluated tasks (``pretrain.exclude``); each 20th line held out,
as ``ablate`` splits its corpus; (2) vocabularies trained on the pretraining part: biotok
Unigram_L 32k (lowercased), BPE 32k (cased), AliBERT's cased Unigram 32k, beside CamemBERTa's;
(3) the intrinsic metrics of ``biotok compare`` on the held-out part and the text's size in
pieces per vocabulary; (4) the causal-LM probe in fair mode, one seed after the other, the page
rewritten after each; (5) with --gpu, the GPU ablation over ``ablate`` (BERT-small from scratch
per vocabulary, 3 pretraining x 3 fine-tuning seeds, random-init floors, every French task), each
job a piece of at most 8 minutes on one H100, resumed job by job; then each instrument's ranking
against each task's (Kendall tau, the laptop's choice against the downstream best).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import sys
from pathlib import Path

from benchmarks import corpora as C

WORK = Path(os.environ.get("BIOTOK_BENCH_CACHE", C.REPO / "benchmarks" / ".data"))
PUBLISHED = C.REPO / "docs" / "results" / "ablation-gpu-fr"
HELDOUT_EVERY = 20  # ablate's split: the i-th line (from 1) is held out when i % 20 == 0
VOCABS = {"Unigram_L-32k": ("unigram", True), "BPE-32k": ("bpe", False), "Unigram-32k": ("unigram", False)}
PROBE = {"steps": 400, "batch_size": 8, "seq_len": 128, "hidden": 128, "heads": 2, "layers": 2, "lr": 2e-3}
# an evaluated sentence of fewer words (an answer option, a term, a header) removes only a line that is
# exactly it: at 1 word, "douleurs abdominales" (a FrenchMedMCQA option) removed 94 clinical cases
MIN_WORDS = 6
PROBE_CHARS = (4_000_000, 400_000)  # the probe's training and held-out samples (probe-fr: 3.1 M and 0.34 M)


def _write_lines(path: Path, lines) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)
    tmp.rename(path)


def _leaflet_sentences(limit: int | None):
    """The leaflets' sentences, each the first time it occurs (compared normalised)."""
    from biotok_train.pretrain.exclude import normalize_sentence, split_sentences

    seen: set[str] = set()
    for i, doc in enumerate(C.leaflet_texts()):
        if limit is not None and i >= limit:
            return
        for s in split_sentences(doc):
            key = normalize_sentence(s)
            if key and key not in seen:
                seen.add(key)
                yield s


def build_text(work: Path, quick: bool) -> dict:
    """work/text/{text,pretrain,heldout}.txt and text.json (what each source gave and lost)."""
    from itertools import islice

    from biotok_train.pretrain.exclude import eval_sentences, exclude_sentences

    d = work / "text"
    if (d / "text.json").is_file():
        record = json.loads((d / "text.json").read_text(encoding="utf-8"))
        if record.get("min_words") == MIN_WORDS:
            return record
        import shutil

        for stale in ("tokenizers", "probe", "intrinsic.json", "cpu_seconds.json"):  # made from the old text
            shutil.rmtree(work / stale) if (work / stale).is_dir() else (work / stale).unlink(missing_ok=True)
    d.mkdir(parents=True, exist_ok=True)
    n = 200 if quick else None
    sources = {"E3C PAMJ clinical cases": islice(C.pamj_documents(), n),
               "E3C drug leaflets (sentences, de-duplicated)": _leaflet_sentences(n),
               "WMT-biomed French abstracts": islice(C.wmt_biomed_french(), 20 * n if n else None),
               "CIM-10 labels": islice(C.cim10_labels(), 20 * n if n else None)}
    evaluated = eval_sentences(C.FRENCH_TASKS, str(C.CORPORA))
    kept, record = [], {"tasks": list(C.FRENCH_TASKS), "evaluated_sentences": len(evaluated),
                        "min_words": MIN_WORDS, "sources": {}}
    for name, lines in sources.items():
        lines = list(lines)
        ex = exclude_sentences(lines, evaluated, min_words=MIN_WORDS)
        kept += ex.kept
        record["sources"][name] = {"lines_in": len(lines), "chars_in": sum(map(len, lines)), **ex.to_dict(),
                                   "chars": sum(map(len, ex.kept))}
    held = [line for i, line in enumerate(kept, 1) if i % HELDOUT_EVERY == 0]
    train = [line for i, line in enumerate(kept, 1) if i % HELDOUT_EVERY != 0]
    for name, lines in (("text", kept), ("pretrain", train), ("heldout", held)):
        _write_lines(d / f"{name}.txt", lines)
        record[name] = {"lines": len(lines), "chars": sum(map(len, lines))}
    (d / "text.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return record


def vocabularies(work: Path, quick: bool, train: bool = True) -> dict[str, str]:
    """name -> tokenizer folder: CamemBERTa's, and biotok's trained on the pretraining part
    (``train`` False: their paths only)."""
    from biotok import TrainConfig, train_tokenizer
    from biotok.config import NormalizeConfig

    size = 1000 if quick else 32000
    out = {"camemberta-base": str(C.CAMEMBERTA)}
    for name, (algo, lower) in VOCABS.items():
        path = work / "tokenizers" / name
        if train and not (path / "tokenizer.json").is_file():
            cfg = TrainConfig(algo=algo, vocab_size=size, normalize=NormalizeConfig(lowercase=lower))
            print(f"ablation_gpu_fr: training {name} ({size:,} pieces)", file=sys.stderr)
            train_tokenizer([work / "text" / "pretrain.txt"], cfg, path, force=True, workers=1)
        out[name] = str(path)
    return out


def intrinsic(work: Path, vocabs: dict[str, str]) -> dict:
    """compare's fertility, Rényi efficiency and Zipf fit on the held-out part, and the pieces
    of the pretraining part, per vocabulary (intrinsic.json, once)."""
    from biotok.corpus import iter_lines
    from biotok.formats import load
    from biotok.metrics import compare, count

    path = work / "intrinsic.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    toks = [load(p, name=n) for n, p in vocabs.items()]
    held = compare(toks, iter_lines([str(work / "text" / "heldout.txt")]))
    pieces = count(toks, iter_lines([str(work / "text" / "pretrain.txt")]))
    res = {n: {**r.as_dict(), "zipf": z.as_dict() if z else None, "pretrain_pieces": c.pieces}
           for n, r, z, c in zip(vocabs, held.results, held.zipf, pieces)}
    path.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return res


def probe_samples(work: Path) -> tuple[Path, Path]:
    """Every k-th line of the pretraining and held-out parts, about PROBE_CHARS characters each."""
    out = []
    for part, target in zip(("pretrain", "heldout"), PROBE_CHARS):
        path = work / "text" / f"probe_{part}.txt"
        if not path.is_file():
            lines = (work / "text" / f"{part}.txt").read_text(encoding="utf-8").splitlines()
            k = max(1, sum(map(len, lines)) // target)
            _write_lines(path, lines[::k])
        out.append(path)
    return out[0], out[1]


def probe(work: Path, vocabs: dict[str, str], seeds: tuple[int, ...], quick: bool):
    from biotok_train.config import ProbeConfig
    from biotok_train.probe import run_probe

    train, held = probe_samples(work)
    sizes = {**PROBE, "steps": 30, "seq_len": 64, "hidden": 64} if quick else PROBE
    cfg = ProbeConfig(tokenizers=tuple(vocabs.values()), corpus=(str(train),), heldout=(str(held),), seeds=seeds,
                      fair=True, n_resamples=300 if quick else 2000, **sizes)
    run_probe(cfg, work / "probe", progress=True)
    return json.loads((work / "probe" / "probe.json").read_text(encoding="utf-8"))


GPU_SUITE = C.GPU_SUITE_H200 / "ablation.json"  # the first GPU ablation


def _timed(work: Path, phase: str, done: Path, fn, *args):
    """Run ``fn(*args)``; when ``done`` (what the phase writes) was not there before, record the
    phase's CPU seconds in work/cpu_seconds.json (a phase found finished costs nothing new)."""
    import time

    ran = not done.exists()
    t = time.process_time()
    out = fn(*args)
    path = work / "cpu_seconds.json"
    spent = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}  # read after: a rebuilt text resets it
    if ran:
        spent[phase] = time.process_time() - t
        path.write_text(json.dumps(spent, indent=1) + "\n", encoding="utf-8")
    return out


def probe_chars(vocabs: dict[str, str], heldout: Path) -> list[int]:
    """Each held-out document's characters as the fair-mode probe scores them."""
    from biotok_train.probe import data as D
    from biotok_train.probe.run import load_tokenizer

    how = D.fair_transform([D.normalization(load_tokenizer(p)) for p in vocabs.values()])
    return [len(D.transform(d, how)) for d in D.read_documents([str(heldout)], None, "--heldout")]


def instruments(metrics: dict | None, probe_result: dict | None, work: Path, vocabs: dict[str, str]) -> list:
    """One :class:`~biotok_train.predict.Ranking` per cheap instrument (the probe's with bootstrap
    replicates over held-out documents)."""
    from biotok_train.predict import Ranking, probe_ranking

    out = []
    if probe_result is not None:
        runs = [json.loads(f.read_text(encoding="utf-8")) for f in sorted((work / "probe" / "runs").glob("*/seed*.json"))]
        chars = probe_chars(vocabs, work / "text" / "probe_heldout.txt")
        out.append(probe_ranking("the causal-LM probe (fair, bits/char)", probe_result, runs, chars))
    if metrics is not None:
        out += [Ranking("fertility (pieces/word)", {n: m["fertility"] for n, m in metrics.items()}, False),
                Ranking("Rényi efficiency", {n: m["renyi_efficiency"] for n, m in metrics.items()}, True),
                Ranking("Zipf fit (R²)", {n: m["zipf"]["r2"] for n, m in metrics.items() if m["zipf"]}, True)]
    return out


def _text_section(text: dict, metrics: dict | None) -> list[str]:
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
             f"- In all {text['text']['chars']:,} characters in {text['text']['lines']:,} lines; each {HELDOUT_EVERY}th "
             f"line held out as `ablate` does: pretraining part {text['pretrain']['chars']:,} characters, held-out "
             f"part {text['heldout']['chars']:,}. Every vocabulary is trained on the pretraining part only."]
    if metrics is not None:
        positions = GPU["budget"] * GPU["batch_size"] * GPU["seq_len"]
        lines.append(f"- Its pretraining part in pieces, and the epochs the GPU recipe's budget ({positions:,} positions "
                     "per arm, below) makes of it: "
                     + "; ".join(f"{n} {m['pretrain_pieces']:,} pieces ({positions / m['pretrain_pieces']:.1f} epochs)"
                                 for n, m in metrics.items()) + ".")
    return lines + [""]


def _instrument_section(metrics: dict | None, probe_result: dict | None, found: list, names: list[str]) -> list[str]:
    from biotok_train.predict import agreement, pairs
    from biotok_train.stats import SeedSummary

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
        lower = [n for n in names if VOCABS.get(n, ("", False))[1]]
        lines += ["Intrinsic metrics: `biotok compare` on the whole held-out part, raw text as `compare` reads it"
                  + (f" ({', '.join(lower)} lowercases it first: fewer forms to cover, which lowers its fertility; "
                     "the probe, in fair mode, does not give it that advantage)" if lower else "") + ".", ""]
    arms = {a["name"]: a for a in (probe_result or {}).get("arms", [])}
    lines += ["| vocabulary | probe bits/char | vs unigram floor [95 % CI] | fertility | Rényi efficiency | "
              "Zipf R² (exponent) | pieces/char |", "|---|---:|---:|---:|---:|---:|---:|"]
    for n in names:
        a, m = arms.get(n), (metrics or {}).get(n)
        probe_cells = (f"{SeedSummary.from_dict(a['bits_per_char']).format()} | {a['versus_floor']['difference']:+.3f} "
                       f"[{a['versus_floor']['low']:+.3f}, {a['versus_floor']['high']:+.3f}]") if a else "pending | pending"
        metric_cells = (f"{m['fertility']:.3f} | {m['renyi_efficiency']:.3f} | "
                        + (f"{m['zipf']['r2']:.3f} ({m['zipf']['exponent']:.2f})" if m["zipf"] else "n/a")
                        + f" | {1 / m['chars_per_piece']:.3f}") if m else "pending | pending | pending | pending"
        lines.append(f"| {n} | {probe_cells} | {metric_cells} |")
    lines.append("")
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


def _prediction_section(found: list, downstream: dict | None, n: int) -> list[str]:
    """Each instrument against each task of the GPU ablation, or what will be tested."""
    from biotok_train.predict import ablation_rankings, agreements, smallest_p_value, summary

    lines = ["## Does the laptop verdict predict the downstream one?", ""]
    if downstream is None:
        lines += ["Pending the GPU run. For each task, the downstream ranking (mean over pretraining x fine-tuning "
                  "seeds) will be compared with each instrument's: Kendall tau with its p-value and the number of "
                  "vocabularies (`biotok_train.predict.agreement`), and a sentence saying whether the instrument's "
                  "choice is the downstream best or one the paired bootstrap cannot tell from it. "
                  + ("The laptop verdicts to be tested: " + "; ".join(f"{r.name} chooses {r.best()}" for r in found)
                     + "." if found else "No instrument has run yet.")]
    else:
        tasks = ablation_rankings(downstream)
        lines += [f"- {t.name}, best first: {' > '.join(t.order())}"
                  + (f" ({', '.join(t.tied_with_best)} cannot be told from {t.best()})" if t.tied_with_best else "")
                  + "." for t in tasks]
        found_pairs = agreements(found, tasks)
        lines += [f"- {a.sentence()}" for a in found_pairs] + ["", f"**In one line**: {summary(found_pairs)}", ""]
        lines += _downstream_details(downstream)
    if n > 1:
        lines += ["", f"With {n} vocabularies, even a perfect agreement has p = {smallest_p_value(n):.3f} (exact "
                  "test): this experiment can show agreement and the choice, not significance at 5 %."]
    return lines + [""]


def _downstream_details(d: dict) -> list[str]:
    """Every pair on every task, the floors, and what the GPU side took (from its records)."""
    lines = ["The downstream verdicts, every pair of vocabularies (paired bootstrap over test examples, seeds pooled):", ""]
    lines += [f"- {c['task']}: {c['candidate_arm']} minus {c['reference_arm']} {c['difference']:+.3f} "
              f"[{c['low']:+.3f}, {c['high']:+.3f}]: {c['verdict']}." for c in d["comparisons"] if c["task"] != "mlm"]
    beat = [f for f in d.get("floors", []) if f.get("beats_floor")]
    lines += ["", f"- {len(beat)} of {len(d.get('floors', []))} arm-task pairs beat their random-init floor."]
    jobs = d["costs"]["jobs"].values()
    by_device: dict[str, float] = {}
    for j in jobs:
        by_device[j["device"]] = by_device.get(j["device"], 0.0) + j["wall_s"]
    lines.append("- The GPU ablation's jobs took " + ", ".join(f"{s / 60:.1f} minutes on {dev}" for dev, s in
                                                               sorted(by_device.items()))
                 + " (costs.json; the ablation's own report: gpu/ablation.md).")
    return lines + [""]


PHASES = ("text", "vocabularies", "intrinsic")


def _cpu_sentence(spent: dict, probe_cpu: float, runs: int) -> str:
    """What the CPU side took, phase by phase (cpu_seconds.json; the probe's runs: timings.json)."""
    parts = [f"{p} {spent[p] / 60:.1f}" for p in PHASES if p in spent] + [f"probe ({runs} runs) {probe_cpu / 60:.1f}"]
    missing = [p for p in PHASES if p not in spent]
    return (f"The CPU side took {(sum(spent.get(p, 0) for p in PHASES) + probe_cpu) / 60:.0f} CPU-minutes on a "
            f"shared 2-core machine ({', '.join(parts)})"
            + (f"; not recorded: {', '.join(missing)} (a phase is timed the first time it runs)" if missing else "")
            + ".")


def publish(dest: Path, command: str, text: dict, metrics: dict | None, probe_result: dict | None,
            vocabs: dict[str, str], work: Path, downstream: dict | None = None) -> None:
    """README.md (every sentence from the numbers) and the numbers it reads, into ``dest``;
    ``downstream``: the GPU ablation's ablation.json, once it exists."""
    found = instruments(metrics, probe_result, work, vocabs)
    spent = json.loads((work / "cpu_seconds.json").read_text(encoding="utf-8")) if (work / "cpu_seconds.json").is_file() else {}
    timings_file = work / "probe" / "timings.json"
    timings = json.loads(timings_file.read_text(encoding="utf-8")) if timings_file.is_file() else {}
    probe_cpu = sum(t["train_cpu_s"] + t["eval_cpu_s"] for t in timings.values())
    lines = ["# AliBERT's question on one GPU: French vocabularies pretrained from scratch, and does the laptop "
             "predict the answer?", "", "Regenerate everything here with one command (each phase is kept in "
             "benchmarks/.data/ablation_gpu_fr/, a rerun resumes):", "", "```bash", command, "```", "",
             _cpu_sentence(spent, probe_cpu, len(timings)), "",
             *(["**Status: the GPU side is pending.** No downstream result exists yet (BERT-small pretrained from "
                "scratch on this text, fine-tuned on " + ", ".join(text["tasks"]) + "): this page shows the cheap "
                "instruments' side, the rankings the downstream ones will be tested against.", ""]
               if downstream is None else []),
             "Vocabularies: " + ", ".join(f"{k} ({VOCABS[k][0]}, {'lowercased' if VOCABS[k][1] else 'cased'})"
                                          if k in VOCABS else f"{k} (its authors', general French web text)"
                                          for k in vocabs) + ".", ""]
    lines += _text_section(text, metrics) + _instrument_section(metrics, probe_result, found, list(vocabs))
    lines += _prediction_section(found, downstream, len(vocabs))
    if downstream is None and GPU_SUITE.is_file():
        lines += plan_section(work, vocabs)
    dest.mkdir(parents=True, exist_ok=True)
    for name, obj in (("text.json", text), ("intrinsic.json", metrics), ("probe.json", probe_result),
                      ("timings.json", timings or None)):
        if obj is not None:
            (dest / name).write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if downstream is not None:
        import shutil

        (dest / "gpu").mkdir(exist_ok=True)
        for name in ("ablation.md", "ablation.json", "costs.json", "ablation.png"):
            if (work / "gpu" / name).is_file():
                shutil.copyfile(work / "gpu" / name, dest / "gpu" / name)
        (dest / "downstream.json").write_text(json.dumps(downstream, indent=1) + "\n", encoding="utf-8")
    if spent:
        (dest / "cpu_seconds.json").write_text(json.dumps(spent, indent=1) + "\n", encoding="utf-8")
    (dest / "README.md").write_text("\n".join(lines), encoding="utf-8")


# --- the GPU side: its plan and its cost from the GPU suite's measured throughput -------------------
H100_OVER_H200 = 3.35 / 4.8  # memory bandwidth (TB/s): same bf16 peak, so a conservative slow-down
JOB_OVERHEAD_S = 20.0  # start-up of one job (model load, data, first steps), an assumption
PIECE_MINUTES = 8.0


def measured_throughput(path: Path = GPU_SUITE) -> dict:
    """Token positions per second of BERT-small MLM on one H200 from the GPU suite's ablation: its
    arms' positions over the whole run's wall time (evaluation and fine-tunes included, so a lower
    bound), and the H100 figure it implies."""
    suite = json.loads(path.read_text(encoding="utf-8"))
    step = suite["steps"]["ablation"]
    positions = sum(leg["tokens_seen"] for leg in step["legs"])
    h200 = positions / step["wall_s"]
    return {"source": f"{path.parent.name}/{path.name}", "device": suite["device"]["name"], "size": step["size"],
            "positions": positions, "wall_s": step["wall_s"], "h200_positions_per_s": h200,
            "h100_positions_per_s": h200 * H100_OVER_H200}


# BERT-small from scratch, the same positions for every arm: 3 x the first GPU run's 24.6 M positions
# (which already left the plateau by far), a few epochs of this text, one pretraining in one piece
GPU = {"sizes": ("small",), "budget": 9000, "batch_size": 64, "seq_len": 128, "lr": 5e-4,
       "pretrain_seeds": (0, 1, 2), "seeds": (0, 1, 2)}


def gpu_config(work: Path, vocabs: dict[str, str]):
    """The GPU ablation's recipe: every vocabulary, every French task, random-init floors."""
    from biotok_train.config import AblationConfig

    return AblationConfig(tokenizers=tuple(vocabs.values()), corpus=(str(work / "text" / "text.txt"),),
                          tasks=C.FRENCH_TASKS, data_dir=str(C.CORPORA), heldout_every=HELDOUT_EVERY, **GPU)


def gpu_plan(cfg, task_sizes: dict[str, tuple[int, int, int, int]], positions_per_s: float) -> list[dict]:
    """Each kind of GPU job of the ablation ``cfg``: how many, and its estimated GPU-minutes on one
    card at ``positions_per_s`` (``task_sizes``: train, dev, test examples and sequences per example).
    A fine-tune costs its padded positions (epochs x train + dev each epoch + test, forward-only
    counted a third) at the pretraining rate, plus :data:`JOB_OVERHEAD_S` each job."""
    arms, pseeds, fseeds = len(cfg.tokenizers), len(cfg.pretrain_seeds), len(cfg.seeds)
    length = cfg.finetune_config(0).max_length
    rows = [{"job": "pretrain", "count": arms * pseeds,
             "minutes": (cfg.tokens_per_arm / positions_per_s + JOB_OVERHEAD_S) / 60}]
    for task, (train, dev, test, per) in task_sizes.items():
        work = per * length * (cfg.finetune.epochs * (train + dev / 3) + test / 3)
        runs = arms * pseeds * fseeds * (2 if cfg.floor else 1)
        rows.append({"job": f"finetune {task}", "count": runs, "minutes": (work / positions_per_s + JOB_OVERHEAD_S) / 60})
    for r in rows:
        r["total_minutes"] = r["count"] * r["minutes"]
        r["fits_a_piece"] = r["minutes"] <= PIECE_MINUTES
    return rows


PACKED = 4  # fine-tunes sharing one GPU (the new engine's --gpus-per-job 0.25)


def plan_section(work: Path, vocabs: dict[str, str]) -> list[str]:
    """The GPU ablation's recipe and its estimated GPU-minutes, in words and a table."""
    cfg = gpu_config(work, vocabs)
    t = measured_throughput()
    rows = gpu_plan(cfg, task_sizes(cfg.tasks, str(C.CORPORA)), t["h100_positions_per_s"])
    total = sum(r["total_minutes"] for r in rows)
    pre = sum(r["total_minutes"] for r in rows if r["job"] == "pretrain")
    lines = ["## The GPU side: its recipe and estimated cost", "",
             f"BERT-{cfg.sizes[0]} from scratch per vocabulary, {cfg.budget:,} steps x {cfg.batch_size} x {cfg.seq_len} "
             f"= {cfg.tokens_per_arm:,} token positions for every arm, pretraining seeds "
             f"{', '.join(map(str, cfg.pretrain_seeds))} x fine-tuning seeds {', '.join(map(str, cfg.seeds))}, every "
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
              f"{pre + (total - pre) / PACKED:.0f} minutes with the fine-tunes packed {PACKED} to the GPU. "
              + ("Every job fits one piece of at most 8 minutes, so a run cut at any point loses at most one piece."
                 if all(r["fits_a_piece"] for r in rows) else "Some job does not fit one 8-minute piece."), ""]
    return lines


def task_sizes(tasks, data_dir: str) -> dict[str, tuple[int, int, int, int]]:
    """train, dev and test examples of each task and its sequences per example (a question's options)."""
    from biotok_train.tasks import load

    out = {}
    for t in tasks:
        d = load(t, data_dir)
        per = max(1, len(getattr(d.train[0], "options", ()) or ()))
        out[t] = (len(d.train), len(d.dev), len(d.test), per)
    return out


def toy_config(work: Path, vocabs: dict[str, str], tasks: tuple[str, ...]):
    """The GPU recipe at toy size, every piece of it, for a CPU in a few minutes (``--dry-run``)."""
    from biotok_train.config import FinetuneConfig

    full = gpu_config(work, vocabs)
    return dataclasses.replace(full, tasks=tasks, sizes=("tiny",), budget=4, batch_size=2, seq_len=32,
                               pretrain_seeds=(0,), seeds=(0,), n_words=50, n_resamples=200,
                               finetune=FinetuneConfig(epochs=1, batch_size=4, max_length=64, max_steps=2,
                                                       max_train_sentences=8))


def gpu_side(work: Path, vocabs: dict[str, str], engine, dry_run: bool, tasks: tuple[str, ...]) -> dict:
    """Run (or resume: every finished job is kept) the GPU ablation; its ablation.json with the
    paired bootstrap comparisons of every pair of vocabularies, and its costs.json.

    ``ablate`` compares every arm with the first: the report is made again with each vocabulary
    first (the jobs are all done, so only the analysis runs), then in the recipe's order, whose
    files stay."""
    from biotok_train.ablate import run_ablation

    cfg = toy_config(work, vocabs, tasks) if dry_run else gpu_config(work, vocabs)
    toks = cfg.tokenizers
    seen: dict[tuple, dict] = {}
    for i in (*range(1, len(toks)), 0):
        report = run_ablation(dataclasses.replace(cfg, tokenizers=toks[i:] + toks[:i]), work / "gpu", engine=engine,
                              progress=i == 0)
        result = json.loads(report.json_path.read_text(encoding="utf-8"))
        for c in result["comparisons"]:
            seen.setdefault((c["size"], c["task"], c["metric"], frozenset((c["reference_arm"], c["candidate_arm"]))), c)
    costs = json.loads(report.json_path.with_name("costs.json").read_text(encoding="utf-8"))
    return {**result, "comparisons": list(seen.values()), "costs": costs}


def main(argv: list[str] | None = None) -> int:
    from biotok.errors import BiotokError
    from biotok_train.config import EngineConfig

    ap = argparse.ArgumentParser(prog="python -m benchmarks.experiments.ablation_gpu_fr", description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true",
                    help="every piece at toy size on the CPU (a few minutes), into benchmarks/.data/ablation_gpu_fr_dry/")
    ap.add_argument("--gpu", action="store_true", help="also run (or resume) the GPU ablation, then the prediction test")
    ap.add_argument("--publish", action="store_true", help="only write the page from the phases already finished")
    ap.add_argument("--plan", action="store_true", help="only print the GPU recipe's estimated GPU-minutes")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="probe seeds, run one after the other")
    ap.add_argument("--tasks", default=",".join(C.FRENCH_TASKS), help="with --dry-run: the tasks to fine-tune")
    ap.add_argument("--engine", default="local", choices=("local", "ray"))
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--gpus-per-job", type=float, default=0.0, help="with --engine ray: e.g. 0.25, four fine-tunes a GPU")
    a = ap.parse_args(argv)
    C.require_data()
    work = WORK / ("ablation_gpu_fr_dry" if a.dry_run else "ablation_gpu_fr")
    dest = work / "page" if a.dry_run else PUBLISHED
    args = [x for x in (argv if argv is not None else sys.argv[1:]) if x != "--publish"]  # the page: what makes it
    command = " ".join(["python -m benchmarks.experiments.ablation_gpu_fr", *map(shlex.quote, args)])
    try:
        if a.plan:
            print("\n".join(plan_section(work, vocabularies(work, a.dry_run, train=False))))
            return 0
        from biotok_train.tasks import get_task

        for t in a.tasks.split(","):  # a task it cannot use is refused before any work
            get_task(t)
        engine = EngineConfig(a.engine, a.workers, a.gpus_per_job)
        run(work, dest, command, a, engine)
    except BiotokError as e:
        print(f"ablation_gpu_fr: error: {e}", file=sys.stderr)
        return 2
    print(f"ablation_gpu_fr: {dest / 'README.md'}", file=sys.stderr)
    return 0


def run(work: Path, dest: Path, command: str, a, engine) -> None:
    """The phases in order, the page rewritten after each (``a.publish``: from what is finished only)."""
    text = _timed(work, "text", work / "text" / "text.json", build_text, work, a.dry_run)
    vocabs = _timed(work, "vocabularies", work / "tokenizers" / list(VOCABS)[-1] / "tokenizer.json", vocabularies, work,
                    a.dry_run)
    if a.publish:
        metrics = json.loads((work / "intrinsic.json").read_text(encoding="utf-8"))
        result = json.loads((work / "probe" / "probe.json").read_text(encoding="utf-8"))
        gpu = work / "downstream.json"  # the GPU ablation with every pair compared (written by --gpu)
        downstream = json.loads(gpu.read_text(encoding="utf-8")) if gpu.is_file() else None
        publish(dest, command, text, metrics, result, vocabs, work, downstream)
        return
    result = probe(work, vocabs, tuple(a.seeds[:1]), a.dry_run)
    metrics = _timed(work, "intrinsic", work / "intrinsic.json", intrinsic, work, vocabs)
    publish(dest, command, text, metrics, result, vocabs, work)
    for i in range(1, 1 if a.dry_run else len(a.seeds)):  # a dry run: the first seed only
        result = probe(work, vocabs, tuple(a.seeds[:i + 1]), a.dry_run)
        publish(dest, command, text, metrics, result, vocabs, work)
    if a.gpu or a.dry_run:
        downstream = gpu_side(work, vocabs, engine, a.dry_run, tuple(a.tasks.split(",")))
        (work / "downstream.json").write_text(json.dumps(downstream, indent=1) + "\n", encoding="utf-8")
        publish(dest, command, text, metrics, result, vocabs, work, downstream)


if __name__ == "__main__":
    sys.exit(main())
