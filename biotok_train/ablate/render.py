"""The page of an ablation from its results alone (:mod:`~biotok_train.ablate.results`, read back
from ablation.json): ablation.md (budgets, results, floors, plateau, curves, probe, verdicts,
costs, recipe), ablation.png, heldout_curve.png and a published README. Nothing here computes a
statistic: every number and verdict is one of the results, shown."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Sequence

from biotok.output import atomic_file
from biotok_train.ablate.results import MLM, AblationReport, ArmResult, Recipe, Results, at_size, load, metric_label

CURVE_PNG = "heldout_curve.png"
NO_SIGNAL = "no signal"  # the verdict shown where the results say it says nothing (a comparison's "signal": false)


def write(res: Results, out: Path) -> tuple[str, Path | None]:
    """ablation.md, ablation.png and (with a held-out curve) heldout_curve.png in ``out``, each
    replaced atomically. Returns the page and the curve's plot."""
    md = markdown(res)
    with atomic_file(out / "ablation.md", force=True) as tmp:
        tmp.write_text(md, encoding="utf-8")
    plot(res, out / "ablation.png")
    return md, plot_heldout_curve(res, out / CURVE_PNG)


def rewrite(out: Path) -> str:
    """The page of the ablation in ``out`` written again from its ablation.json (and costs.json)."""
    return write(load(out), out)[0]


def _start(cfg: Recipe, a: ArmResult) -> str:
    """The first column of a row: the size, or with a base where the arm's model starts."""
    if cfg.base is None:
        return a.size
    if a.init == "transfer":
        return f"the base, {a.name.split('.', 1)[0].removeprefix('transfer-') if len(cfg.transfer_methods) > 1 else cfg.transfer_methods[0]} rows"
    if a.init == "extend":
        return f"the base + {cfg.extend_add:,} pieces, fvt rows"
    return {"general": "the base, as is", "continual": "the base", "scratch": "random weights"}[a.init]


def _cell(s: dict, digits: int = 3) -> str:
    """``0.512 ± 0.013`` (or ``0.512`` for one seed): a seed summary's cell."""
    return f"{s['mean']:.{digits}f}" + ("" if s["std"] is None else f" ± {s['std']:.{digits}f}")


def _verdict(c: dict, short: bool = False) -> str:
    """A comparison's verdict as shown: "no signal" where the results say it carries none."""
    if c.get("signal", True) is False:
        return NO_SIGNAL
    return "≈" if short and c["verdict"] == "indistinguishable" else c["verdict"]


def markdown(res: Results) -> str:
    """ablation.md: budgets, results with intervals and verdicts (every pair with ``pairs="all"``),
    trivial baselines, floors, plateau, curve, probe, rankings, verdicts, costs, command."""
    cfg, names = res.setup, res.names
    lines = ["# Vocabulary ablation", "", _intro(cfg, names), "", *_budget_section(cfg, res.arms)]
    for size in cfg.sizes:
        lines += _results_section(res, size)
    if cfg.pairs == "all" and len(names) > 2:
        lines += _all_pairs_section(cfg, res.tasks, res.comparisons)
    if res.baselines:
        lines += _baselines_section(res)
    if res.floors or res.mlm_floors:
        lines += _floors_section(res)
    if any(a.heldout_mlm for a in res.arms):
        lines += _plateau_section(cfg, res.arms)
    if res.heldout_curve:
        lines += _heldout_curve_section(cfg, res.heldout_curve, res.heldout_curve_gaps or ())
    points, gaps = res.curve or [], res.curve_gaps or []
    for task in dict.fromkeys(p["task"] for p in points):
        lines += _curve_section(cfg, res.tasks, [p for p in points if p["task"] == task],
                                [g for g in gaps if g["task"] == task])
    if any(a.probe for a in res.arms):
        lines += _probe_section(cfg, res.arms, res.probe_rankings or ())
    if res.rankings:
        lines += ["", "## Do the sizes agree?", ""] + [f"- {r['sentence']}" for r in res.rankings]
    lines += ["", "## Verdicts", ""] + [f"- {s}" for s in res.verdicts]
    if res.costs:
        lines += _costs_section(res.costs)
    lines += _recipe_section(res)
    return "\n".join(lines)


def _curve_section(cfg: Recipe, tasks: dict, points: Sequence[dict], gaps: Sequence[dict]) -> list[str]:
    """The first task's score of each pretrained arm after k MLM steps, and each arm minus the
    curve's reference at each step with its paired interval."""
    steps = sorted({p["step"] for p in points})
    task = points[0]["task"]
    lines = ["", f"## The curve: {metric_label(tasks, task)}" if cfg.curve_tasks else "## The curve", "",
             f"{metric_label(tasks, task)} (mean ± std over seeds) after k MLM steps "
             "(k = 0: fine-tuned from where the arm starts; the last column is the budget).", "",
             "| arm | " + " | ".join(f"k = {k:,}" for k in steps) + " |", "|---|" + "---:|" * len(steps)]
    sized = len(cfg.sizes) > 1
    for size, arm in dict.fromkeys((p["size"], p["arm"]) for p in points):
        cells = {p["step"]: _cell(p) for p in points if p["arm"] == arm and p["size"] == size}
        lines.append(f"| {f'{arm} ({size})' if sized else arm} | " + " | ".join(cells.get(k, "") for k in steps) + " |")
    if gaps:
        lines += ["", f"| k | candidate − {gaps[0]['reference_arm']} | Δ [{cfg.confidence:.0%} CI] | verdict |",
                  "|---:|---|---|---|"]
        lines += [f"| {g['step']:,} | {g['candidate_arm']} | {g['difference']:+.3f} [{g['low']:+.3f}, "
                  f"{g['high']:+.3f}] | {g['verdict']} |" for g in gaps]
    return lines



def _heldout_curve_section(cfg: Recipe, held: Sequence[dict], held_gaps: Sequence[dict] = ()) -> list[str]:
    """Each pretrained arm's held-out [MASK] loss against the unigram floor after k MLM steps: when
    it left the plateau (the sentences are in the verdicts)."""
    sized = len(cfg.sizes) > 1
    lines = ["", "## The held-out curve: when did each arm leave the plateau?", "",
             "The held-out [MASK] numbers of the plateau section after k MLM steps (k = 0: the model the arm starts "
             "from, where there is one on disk; the last step is the budget), pooled over pretraining seeds. Gap: "
             f"loss minus unigram floor with its {cfg.confidence:.0%} bootstrap interval over held-out sequences; an "
             "arm has left the plateau where the interval lies below zero. Token positions: steps × batch × "
             "sequence length.", "", f"![held-out curve]({CURVE_PNG})", "",
             "| arm | k | token positions | [MASK] loss | unigram floor | gap [CI] | left the plateau | top-1 | "
             "most-frequent top-1 | masked-word top-1 |", "|---|---:|---:|---|---|---|---|---|---|---|"]
    for p in held:
        who = f"{p['arm']} ({p['size']})" if sized else p["arm"]
        lines.append(f"| {who} | {p['step']:,} | {p['token_positions']:,} | {p['loss']:.3f} | {p['floor_loss']:.3f} | "
                     f"{p['gap']:+.3f} [{p['gap_low']:+.3f}, {p['gap_high']:+.3f}] | "
                     f"{'yes' if p['left_plateau'] else '**no**'} | {p['top1']:.3f} | {p['floor_top1']:.3f} | "
                     f"{_cell(p['mlm_top1'])} |")
    if held_gaps:
        lines += ["", "Arms of the same vocabulary on the same positions: candidate minus reference [MASK] loss, paired "
                  f"{cfg.confidence:.0%} bootstrap over held-out sequences (negative: the candidate predicts better).", "",
                  "| k | candidate − reference | Δ loss [CI] | verdict |", "|---:|---|---|---|"]
        lines += [f"| {g['step']:,} | {g['candidate_arm']} − {g['reference_arm']}"
                  + (f" ({g['size']})" if sized else "") + f" | {g['difference']:+.3f} [{g['low']:+.3f}, "
                  f"{g['high']:+.3f}] | {g['verdict']} |" for g in held_gaps]
    return lines


def plot_heldout_curve(res: Results, path: Path) -> Path | None:
    """heldout_curve.png (none without a curve: a stale one is removed): per size, the gap to the
    unigram floor against the token positions trained on, one line per arm, its interval shaded;
    symmetric-log where the gaps span more than one nat (a start far above the floor would flatten the rest).
    Byte-stable: no software or date in the file."""
    held = res.heldout_curve
    if not held:
        path.unlink(missing_ok=True)
        return None
    import matplotlib  # lazy: plotting only when writing the report

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after the Agg backend is chosen

    sizes = list(dict.fromkeys(p["size"] for p in held))
    fig, axes = plt.subplots(1, len(sizes), figsize=(7 * len(sizes), 4), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        rows = [p for p in held if p["size"] == size]
        for arm in dict.fromkeys(p["arm"] for p in rows):
            pts = [p for p in rows if p["arm"] == arm]
            x = [p["token_positions"] / 1e6 for p in pts]
            ax.plot(x, [p["gap"] for p in pts], marker="o", label=arm)
            ax.fill_between(x, [p["gap_low"] for p in pts], [p["gap_high"] for p in pts], alpha=0.2)
        if max(p["gap_high"] for p in rows) - min(p["gap_low"] for p in rows) > 1:
            ax.set_yscale("symlog", linthresh=0.1)
        ax.axhline(0.0, color="grey", linestyle="--", linewidth=1)
        ax.set_xlabel("token positions trained on (millions)")
        ax.set_ylabel("held-out [MASK] loss − unigram floor (nats)")
        ax.set_title(("" if len(sizes) == 1 else f"{at_size(size)}: ") + "Below 0: the model uses context", fontsize=10)
        ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_file(path, force=True) as tmp:
        fig.savefig(tmp, dpi=120, format="png", metadata={"Software": None})
    plt.close(fig)
    return path


def _costs_section(cost: dict) -> list[str]:
    """CPU minutes of every job, per arm and kind (costs.json has every job's CPU and wall seconds)."""
    kinds = sorted({k for row in cost["by_arm"].values() for k in row})
    lines = ["", "## Costs", "", f"{cost['total_cpu_s'] / 60:.1f} CPU-minutes in all (the processes that ran the "
             f"jobs), {cost['total_wall_s'] / 60:.1f} minutes of job wall time; per arm or shared part, CPU "
             "minutes by kind of job (costs.json: every job's CPU and wall seconds and device).", "",
             "| arm or part | " + " | ".join(kinds) + " | total |", "|---|" + "---:|" * (len(kinds) + 1)]
    for arm, row in cost["by_arm"].items():
        lines.append(f"| {arm} | " + " | ".join(f"{row[k] / 60:.1f}" if k in row else "" for k in kinds)
                     + f" | {sum(row.values()) / 60:.1f} |")
    return lines


def _columns(cfg: Recipe) -> tuple[str, str]:
    """The headers of the first two columns: what a row's model is, and what names it."""
    return ("starts from", "arm") if cfg.base is not None else ("size", "tokenizer")


def _intro(cfg: Recipe, names: list[str]) -> str:
    """Who the reference is, what each arm is (a page saved with one transfer method: as it said then), the budget."""
    if cfg.base is not None and cfg.one_method:
        start = (f"Reference: **{names[0]}** (the first arm). Arms, as PubMedBERT's Table 9: *continual* continues "
                 f"the base model `{cfg.base}` with its own vocabulary; *transfer.T* moves the base to T's vocabulary "
                 f"(`{cfg.transfer_methods[0]}`: shared pieces keep their rows) and continues; *scratch.T* is the "
                 "base's architecture from random weights with T's vocabulary. Every arm: MLM with the base's "
                 f"architecture, {cfg.budget} steps × ")
    elif cfg.base is not None:
        methods = ", ".join(f"`{m}`" for m in cfg.transfer_methods)
        said = {"general": f"*general* is the base model `{cfg.base}` as it is (fine-tuned only)",
                "continual": "*continual* continues the base with its own vocabulary",
                "extend": f"*extend.B+K* keeps the base's vocabulary B, adds K = {getattr(cfg, 'extend_add', 0):,} pieces "
                          "chosen by their savings on the pretraining text (`biotok extend`: every base id kept, no "
                          "text segmented into more pieces), gives them FVT rows and continues",
                "transfer": "*transfer.T* (*transfer-METHOD.T* with several methods) moves the base to T's vocabulary "
                            f"({methods}: shared pieces keep their rows) and continues",
                "scratch": "*scratch.T* is the base's architecture from random weights with T's vocabulary"}
        start = (f"Reference: **{names[0]}** (the first arm). Arms, as PubMedBERT's Table 9: "
                 + "; ".join(said[a] for a in said if a in cfg.arms)
                 + ("" if "general" in cfg.arms else f" (the base: `{cfg.base}`)")
                 + f". Every arm: MLM with the base's architecture, {cfg.budget} steps × ")
    else:
        start = f"Reference: **{names[0]}** (the first tokenizer). Every arm: BERT MLM, {cfg.budget} steps × "
    return (start + f"{cfg.batch_size} sequences × {cfg.seq_len} pieces = {cfg.tokens_per_arm:,} token positions; "
            f"pretraining seeds {', '.join(map(str, cfg.pretrain_seeds))}; fine-tuning seeds "
            f"{', '.join(map(str, cfg.seeds))}.")


def _budget_section(cfg: Recipe, arms: list[ArmResult]) -> list[str]:
    """What each arm trained on (older runs, which measured it: a single step's training loss too)."""
    first, who = _columns(cfg)
    old = any(a.pretrain_loss for a in arms)
    lines = ["## Budget", "",
             "Same steps, batch and sequence length for every arm. A vocabulary with fewer pieces per word "
             "covers more characters of text with the same tokens: *characters seen* credits it.", "",
             f"| {first} | {who} | vocab | fertility | pieces/line | tokens seen | chars/token | characters seen | epochs |"
             + (" pretrain loss |" if old else ""), "|---|---|---|---|---|---|---|---|---|" + ("---|" if old else "")]
    for a in arms:
        lines.append(f"| {_start(cfg, a)} | {a.name} | {a.vocab_size:,} | {a.fertility:.3f} | {a.pieces_per_line:.1f} | "
                     f"{a.tokens_seen:,} | {a.chars_per_token:.2f} | {a.chars_seen:,} | {a.epochs:.2f} |"
                     + (f" {_cell(a.pretrain_loss)} |" if old else ""))
    return lines


def _plateau_section(cfg: Recipe, arms: list[ArmResult]) -> list[str]:
    """Held-out [MASK] loss against the unigram floor: did each arm's MLM leave the plateau?"""
    first, who = _columns(cfg)
    lines = ["", "## Did the masked LMs leave the plateau?", "",
             "On the held-out lines, 15 % of the pieces at fixed positions all replaced by [MASK]: each arm's loss "
             "there beside the unigram cross-entropy of the same positions (add-one frequencies of the pretraining "
             "pieces: what a model that ignores context scores), and its top-1 beside always answering the most "
             f"frequent piece; pooled over pretraining seeds. Gap: loss minus floor, {cfg.confidence:.0%} bootstrap "
             "interval over held-out sequences. An arm that did not leave the plateau predicts from frequencies "
             "only: its masked-LM numbers say nothing about its vocabulary. (A single step's training loss is not "
             "reported: it counts the pieces left unchanged, which the model learns to copy.)", "",
             f"| {first} | {who} | [MASK] positions | loss | unigram floor | gap [CI] | left the plateau | top-1 | "
             "most-frequent top-1 |", "|---|---|---|---|---|---|---|---|---|"]
    for a in arms:
        h = a.heldout_mlm
        if not h:
            continue
        lines.append(f"| {_start(cfg, a)} | {a.name} | {h['positions']:,} | {h['loss']:.3f} | {h['floor_loss']:.3f} | "
                     f"{h['gap']:+.3f} [{h['gap_low']:+.3f}, {h['gap_high']:+.3f}] | "
                     f"{'yes' if h['left_plateau'] else '**no**'} | {h['top1']:.3f} | {h['floor_top1']:.3f} |")
    return lines


def _probe_section(cfg: Recipe, arms: list[ArmResult], probe_rankings: Sequence[dict]) -> list[str]:
    """The causal-LM probe of each vocabulary and whether it ranks them as the other metrics do."""
    lines = ["", "## Causal-LM probe", "",
             f"One GPT-2 of the same shape per vocabulary, {cfg.probe} steps × {cfg.batch_size} × {cfg.seq_len} "
             "tokens per pretraining seed, on the same pretraining lines; bits per character of the held-out lines "
             "(lower is better), beside the vocabulary's unigram floor; Δ against the reference vocabulary with its "
             f"{cfg.confidence:.0%} paired bootstrap interval over held-out lines (probe/probe.md has the details).", "",
             "| vocabulary | bits/char | unigram floor | vs floor [CI] | Δ vs reference [CI] |", "|---|---|---|---|---|"]
    seen = set()
    for a in arms:
        v = a.vocabulary or a.name
        if v in seen or not a.probe:
            continue
        seen.add(v)
        p, f, c = a.probe, a.probe["versus_floor"], a.probe.get("versus_reference")
        delta = f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}] {c['verdict']}" if c else "reference"
        lines.append(f"| {v} | {_cell(p['bits_per_char'])} | {p['unigram_floor']:.3f} | {f['difference']:+.3f} "
                     f"[{f['low']:+.3f}, {f['high']:+.3f}] | {delta} |")
    if probe_rankings:
        lines += ["", "Whether the probe ranks the vocabularies as each metric does (Kendall τ): see the verdicts."]
    return lines


def _results_section(res: Results, size: str) -> list[str]:
    """One size's table: each arm's mean ± std per metric, with its Δ against the reference and
    verdict ("no signal" where the results say so); the last row each task's trivial baseline (no
    model), its metric marked "no signal" where no arm beats it."""
    cfg, names = res.setup, res.names
    keys = [MLM, *cfg.tasks]
    silent = {s["task"] for s in res.no_signal or () if s["size"] == size}
    lines = ["", f"## Results {at_size(size).lower()}", "",
             f"Mean ± std over seeds; Δ: candidate minus {names[0]}, with its {cfg.confidence:.0%} paired bootstrap "
             f"interval over test examples pooled across seeds, and the verdict."
             + (" Last row: each task's trivial baseline (the best constant answer, chosen on train; no model); "
                "**no signal**: no arm beats it." if res.baselines else ""), ""]
    head = [_columns(cfg)[1]]
    for k in keys:
        head += [metric_label(res.tasks, k) + (" (**no signal**)" if k in silent else ""), "Δ [CI]", "verdict"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in names:
        lines.append("| " + " | ".join([n, *(c for k in keys for c in _result_cells(res, size, n, k))]) + " |")
    if res.baselines:
        cells = ["trivial baseline", "—", "", ""]
        for k in cfg.tasks:
            cells += [f"{res.baselines[k]['test']:.3f} ({res.baselines[k]['rule']})", "", ""]  # the answer, in words
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _result_cells(res: Results, size: str, n: str, k: str) -> list[str]:
    """An arm's three cells on metric ``k``: its mean ± std (flagged below its floor), Δ [CI], verdict."""
    summary = res.arm(size, n).summary(k)
    if summary is None:  # the base as it is: not pretrained here, no masked-word numbers
        return ["—", "", ""]
    low = any(f["size"] == size and f["task"] == k and f["arm"] == n and not f["beats_floor"]
              for f in (res.mlm_floors if k == MLM else res.floors))
    c = next((c for c in res.comparisons if c["size"] == size and c["task"] == k and c["candidate_arm"] == n
              and c["reference_arm"] == res.names[0]), None)
    if c is None:
        return [_cell(summary) + (" ⚠ not above floor" if low else ""), "reference" if n == res.names[0] else "", ""]
    shown = _verdict(c)
    return [_cell(summary) + (" ⚠ not above floor" if low else ""),
            f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]", shown if shown == NO_SIGNAL else f"**{shown}**"]


def _all_pairs_section(cfg: Recipe, tasks: dict, comparisons: list[dict]) -> list[str]:
    """Every pair of arms on every metric, compactly: candidate − reference [CI] and the verdict
    (better / worse / ≈) per size and metric."""
    sized = len(cfg.sizes) > 1
    keys = [k for k in (MLM, *cfg.tasks) if any(c["task"] == k for c in comparisons)]
    pairs = list(dict.fromkeys((c["reference_arm"], c["candidate_arm"]) for c in comparisons))
    lines = ["", "## Every pair", "",
             f"Candidate minus reference with its {cfg.confidence:.0%} paired bootstrap interval (test examples "
             "pooled across seeds; masked words for MLM top-1); ≈: the interval holds 0.", "",
             "| " + ("size | " if sized else "") + "candidate − reference | "
             + " | ".join(metric_label(tasks, k) for k in keys) + " |",
             "|" + ("---|" if sized else "") + "---|" + "---|" * len(keys)]
    for size in cfg.sizes:
        for ref, cand in pairs:
            cells = []
            for k in keys:
                c = next((c for c in comparisons if c["size"] == size and c["task"] == k
                          and c["reference_arm"] == ref and c["candidate_arm"] == cand), None)
                cells.append("" if c is None else f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}] "
                             + _verdict(c, short=True))
            lines.append("| " + (f"{size} | " if sized else "") + f"{cand} − {ref} | " + " | ".join(cells) + " |")
    return lines


def _baselines_section(res: Results) -> list[str]:
    """Each task's trivial baseline (rule, dev and test scores) and which arms beat it."""
    cfg, checks, silent = res.setup, res.baseline_checks or [], res.no_signal or []
    lines = ["", "## Trivial baselines", "",
             "The best constant answer of each task, chosen on its train split with the task's own metric and "
             "scored with it (no model): the number an arm must beat before its score means anything. Beaten: "
             f"the arm's {cfg.confidence:.0%} paired bootstrap interval over test examples (seeds pooled) lies above "
             "it.", "", "| size | task | trivial answer | dev | test | arms that beat it | signal |",
             "|---|---|---|---:|---:|---|---|"]
    for size in cfg.sizes:
        for t in cfg.tasks:
            b = res.baselines[t]
            beat = [c["arm"] for c in checks if c["size"] == size and c["task"] == t and c["beats_baseline"]]
            n = sum(1 for c in checks if c["size"] == size and c["task"] == t)
            quiet = any(s["size"] == size and s["task"] == t for s in silent)
            lines.append(f"| {size} | {metric_label(res.tasks, t)} | {b['rule']} | {b['dev']:.3f} | {b['test']:.3f} | "
                         f"{len(beat)} of {n}" + (f" ({', '.join(beat)})" if beat else "") + " | "
                         + ("**no signal**" if quiet else "yes") + " |")
    return lines


def _floors_section(res: Results) -> list[str]:
    """Each arm against its floors: random-init fine-tuning per task, always the most frequent word."""
    cfg, tasks = res.setup, res.tasks
    first, who = _columns(cfg)
    lines = ["", "## Floors", "",
             "Each task fine-tuned the same way from a randomly initialised model of the same size and "
             "vocabulary: how much pretraining bought. Masked words: always answering the most frequent word "
             f"of the pretraining text, on the same words. Δ: pretrained minus floor ({cfg.confidence:.0%} interval).",
             "", f"| {first} | task | {who} | floor | pretrained | Δ [CI] | beats its floor |",
             "|---|---|---|---|---|---|---|"]
    for f in [*res.mlm_floors, *res.floors]:
        a = res.arm(f["size"], f["arm"])
        if f["task"] == MLM:
            floor_cell, pre = f"{f['reference']:.3f} (always “{f['word']}”)", _cell(a.mlm["top1"])
        else:
            floor_cell, pre = f"{_cell(a.floors[f['task']])} (random init)", _cell(a.metrics[f["task"]])
        lines.append(f"| {_start(cfg, a)} | {metric_label(tasks, f['task'])} | {f['arm']} | {floor_cell} | "
                     f"{pre} | {f['difference']:+.3f} [{f['low']:+.3f}, {f['high']:+.3f}] | "
                     f"{'yes' if f['beats_floor'] else '**no**'} |")
    return lines


def _recipe_section(res: Results) -> list[str]:
    cfg, ft = res.setup, res.setup.finetune
    seeds = len(cfg.pretrain_seeds) * len(cfg.seeds)
    model = (f"MLM from the base `{cfg.base}` (arms {', '.join(cfg.arms)})" if cfg.base is not None
             else f"BERT MLM (sizes {', '.join(cfg.sizes)})")
    return ["", "## Recipe", "",
            f"- Pretraining: {model}, {cfg.budget} steps, batch {cfg.batch_size}, "
            f"sequence length {cfg.seq_len}, peak lr {cfg.lr:g}; the corpus minus each {cfg.heldout_every}th line.",
            f"- Fine-tuning: {ft['epochs']} epochs, lr {ft.get('optim', ft)['lr']:g}, batch {ft['batch_size']}"
            + (f", at most {ft['max_steps']} steps" if ft["max_steps"] else "")
            + (f", {ft['train_fraction']:g} of the training examples" if ft["train_fraction"] < 1 else "")
            + f", early stopping on dev (patience {ft['patience']}); scored on test. Seed pairs per arm and task: {seeds}.",
            "- Tasks: " + "; ".join(f"{t['name']} ({t['type']}, {t['metric']}, {t['n_test']} test examples)"
                                    for t in res.tasks.values()) + ".",
            f"- Masked words: whole-word top-k on {max((a.mlm_words for a in res.arms), default=0)} held-out words, the "
            "same for every arm (the interval pairs the words both arms could score).",
            f"- Statistics: paired percentile bootstrap, {cfg.n_resamples} resamples of test examples (each drawn "
            "with all its seeds), fixed seed 0; verdict better/worse when the interval excludes 0.",
            "", "## Command and versions", "", "```", res.command, "```", "", res.versions, ""]


def plot(res: Results, path: Path) -> Path:
    """One row per size, one panel per metric: mean ± std bars, each seed a dot, the floor a dashed
    line, and each candidate's verdict above its bar ("no signal" where the results say so)."""
    import matplotlib  # lazy: plotting only when writing the page

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after the Agg backend is chosen

    cfg, names = res.setup, res.names
    keys = [MLM, *cfg.tasks]
    fig, axes = plt.subplots(len(cfg.sizes), len(keys), figsize=(3.6 * len(keys) + 0.6, 3.4 * len(cfg.sizes)),
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, size in enumerate(cfg.sizes):
        for j, k in enumerate(keys):
            ax = axes[i][j]
            top = max([0.05, *(_bar(ax, res, size, k, x, colors[x % len(colors)]) for x in range(len(names)))])
            ax.set_xticks(range(len(names)), names, rotation=15, fontsize=8)
            ax.set_ylim(0, min(1.0, top * 1.25))
            ax.set_title(f"{metric_label(res.tasks, k)} · {size}", fontsize=9)
            if ((k == MLM and res.mlm_floors) or (k != MLM and cfg.floor and j == 1)) \
                    and ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7, loc="best")
    fig.suptitle(f"{cfg.budget} steps × {cfg.batch_size} × {cfg.seq_len} per arm; mean ± std over seeds "
                 f"(verdicts vs {names[0]}: {cfg.confidence:.0%} paired bootstrap)", fontsize=9)
    fig.tight_layout()
    with atomic_file(path, force=True) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
    return path


def _bar(ax, res: Results, size: str, k: str, x: int, color) -> float:
    """Arm ``x``'s bar on metric ``k``: mean ± std, its seeds, its floor, its verdict. Returns its top."""
    n = res.names[x]
    a, s = res.arm(size, n), res.arm(size, n).summary(k)
    if s is None:
        return 0.0
    std = s["std"] or 0
    ax.bar(x, s["mean"], 0.6, yerr=std, capsize=4, color=color, alpha=0.85)
    ax.plot([x] * len(s["values"]), s["values"], "k.", ms=5)
    top = max(s["mean"] + std, *s["values"])
    wf = next((f for f in res.mlm_floors if f["size"] == size and f["arm"] == n), None) if k == MLM else None
    if wf is not None or (k != MLM and k in a.floors):
        fl = wf["reference"] if wf is not None else a.floors[k]["mean"]
        label = (f"always “{wf['word']}”" if wf is not None else "floor (random init)") if x == 0 else None
        ax.plot([x - 0.35, x + 0.35], [fl, fl], "k--", lw=1.2, label=label)
        top = max(top, fl)
    c = next((c for c in res.comparisons if c["size"] == size and c["task"] == k and c["candidate_arm"] == n
              and c["reference_arm"] == res.names[0]), None)
    if c is not None:
        ax.annotate(_verdict(c, short=True), (x, s["mean"] + std), xytext=(0, 4), textcoords="offset points",
                    ha="center", fontsize=8)
    return top


def publish(report: AblationReport, out: Path, *, title: str, command: str, intro: Sequence[str] = ()) -> Path:
    """A published result in ``out``: README.md (``title``, the command that regenerates it, ``intro``,
    then the ablation's own report) beside ablation.json, costs.json, ablation.png and (with a
    curve) heldout_curve.png, each replaced atomically. Returns README.md."""
    out.mkdir(parents=True, exist_ok=True)
    body = report.markdown.split("\n", 1)[1].lstrip("\n")  # the report without its own title
    text = "\n".join([f"# {title}", "", f"Generated by `{command}` (do not edit by hand): every number and sentence "
                      "below is computed from `ablation.json` and `costs.json` beside it.", "", *intro, "", body])
    with atomic_file(out / "README.md", force=True) as tmp:
        tmp.write_text(text, encoding="utf-8")
    for src in (report.json_path, report.json_path.with_name("costs.json"), report.png_path, report.curve_png):
        if src is None:
            continue
        with atomic_file(out / src.name, force=True) as tmp:
            shutil.copyfile(src, tmp)
    return out / "README.md"


def published_readme(report: AblationReport, out: Path, *, title: str, command: str, setup: str,
                     cpu_count: int | None = None) -> str:
    """README.md of a published CPU ablation (the recipes of benchmarks/experiments/): the command,
    its cost, the setup, and a reading in which every number and verdict comes from ``report``."""
    lines = [f"# {title}", "", "Regenerate everything here (ablation.md, ablation.json, ablation.png, this README) "
             "with one command:", "", "```bash", command, "```", "", _cost_line(out, cpu_count or os.cpu_count()), "",
             setup, "", "![ablation](ablation.png)", "", "## Reading (computed from ablation.json)", ""]
    lines += _reading_lines(report)
    lines += ["", f"**In one line**: {_one_line_verdict(report)}"]
    lines += ["", "## Verdicts (as in ablation.md)", ""] + [f"- {s}" for s in report.sentences]
    lines += ["", "Budgets, characters seen, floors and intervals: [ablation.md](ablation.md); every number: "
              "`ablation.json`.", ""]
    return "\n".join(lines)


def _cost_line(out: Path, cpu_count: int | None) -> str:
    """What the run cost: the phases of ``timings.json`` (the runs published before costs.json), else
    the jobs' CPU seconds of ``costs.json``."""
    tail = f" on a {cpu_count}-core CPU (no GPU); `--quick` checks in a few minutes that the script runs."
    if (out / "timings.json").is_file():
        minutes = sum(json.loads((out / "timings.json").read_text(encoding="utf-8")).values()) / 60
        return f"The parts timed in `timings.json` add up to {minutes:.0f} minutes" + tail
    costs = out / "costs.json"
    minutes = json.loads(costs.read_text(encoding="utf-8"))["total_cpu_s"] / 60 if costs.is_file() else 0.0
    return f"The jobs' CPU time in `costs.json` adds up to {minutes:.0f} minutes" + tail


def _reading_lines(report: AblationReport) -> list[str]:
    """One line per measure: masked words (with the most-frequent-word floor), then each task with its floors."""
    arms = report.arms
    lines = [f"- Masked-word top-1 on {arms[0].mlm_words:,} held-out words: "
             + "; ".join(f"{a.name} {_cell(a.mlm['top1'])}" for a in arms) + "."]
    if report.mlm_floors:
        wf = report.mlm_floors
        beat = [f["arm"] for f in wf if f["beats_floor"]]
        lines.append(f"- Always answering “{wf[0]['word']}”, the most frequent word of the pretraining text, scores "
                     f"{wf[0]['reference']:.3f} on the words the first arm could score; "
                     + ("every arm beats it." if len(beat) == len(wf) else
                        f"{len(beat)} of {len(wf)} arms beat it" + (f" ({', '.join(beat)})" if beat else "") + "."))
    for key, t in report.tasks.items():
        lines.append(f"- {t['name']} {t['metric']} on {t['n_test']} test examples (mean ± std over seed pairs): "
                     + "; ".join(f"{a.name} {_cell(a.metrics[key])}"
                                 + (f" (floor {_cell(a.floors[key])})" if key in a.floors else "") for a in arms) + ".")
        fl = [f for f in report.floors if f["task"] == key]
        beat = [f["arm"] for f in fl if f["beats_floor"]]
        if fl and len(beat) == len(fl):
            lines.append(f"- Every pretrained arm beats its random-init floor on {t['name']}: the budget bought "
                         "something, so the comparison between arms on that task is about the arms.")
        elif fl:
            lines.append(f"- {len(beat)} of {len(fl)} pretrained arms beat their random-init floor on {t['name']}"
                         + (f" ({', '.join(beat)})" if beat else "")
                         + ": at this budget the arms' differences on that task are not evidence about the "
                           "vocabularies.")
    return lines


def _one_line_verdict(report: AblationReport) -> str:
    """The run in one sentence, from how many arm-floor checks pass."""
    checks = [*report.mlm_floors, *report.floors]
    beaten = sum(f["beats_floor"] for f in checks)
    if checks and beaten == len(checks):
        return ("every pretrained arm beats every floor, so the verdicts below compare arms that learned "
                "something; their intervals say how sure each one is.")
    if checks and beaten == 0:
        return ("no pretrained arm beats any floor (random-init fine-tuning, always answering the most frequent "
                "word): nothing in this run is evidence about the vocabularies or the arms, and the report "
                "says so instead of ranking noise. The budget must grow (a GPU run) before it can decide.")
    return (f"{beaten} of {len(checks)} arm-floor checks pass: trust only the verdicts on the "
            "metrics whose arms beat their floors.")
