"""The report of an ablation: ablation.md (budgets, results, floors, rankings, verdicts, recipe)
and ablation.png."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from biotok.io import versions_sentence
from biotok.output import atomic_file
from biotok_train import stats as S
from biotok_train.ablate.analysis import Results, at_size, baseline_checks, curve, metric_label, no_signal_sentences
from biotok_train.ablate.command import command_line
from biotok_train.ablate.graph import write_json
from biotok_train.ablate.plan import MLM, ArmResult
from biotok_train.ablate.plateau import curve_plateau_sentences, heldout_curve, heldout_curve_gaps, heldout_gap_sentences
from biotok_train.config import AblationConfig


@dataclass(frozen=True)
class AblationReport:
    """The arms, the statistics computed from them, and where the report was written."""

    config: AblationConfig
    arms: list[ArmResult]
    tasks: dict  # task key -> {"name", "type", "metric", "n_test"}
    comparisons: list[dict]  # candidate vs reference, per size and task (PairedBootstrap fields)
    floors: list[dict]  # arm vs its floor, per size and task
    rankings: list[dict]  # RankAgreement dicts, per task, between sizes
    sentences: list[str]  # the verdicts, written from the numbers
    markdown: str
    markdown_path: Path
    json_path: Path
    png_path: Path
    mlm_floors: list = field(default_factory=list)  # arm vs always answering the most frequent word
    probe_rankings: list = field(default_factory=list)  # Kendall τ of the causal-LM probe vs each metric
    curve: list = field(default_factory=list)  # the first task's score of each pretrained arm after k steps
    curve_gaps: list = field(default_factory=list)  # each arm minus the curve's reference at each step
    costs: dict = field(default_factory=dict)  # costs.json: CPU and wall seconds of every job
    heldout_curve: list = field(default_factory=list)  # each pretrained arm's held-out [MASK] numbers after k steps
    heldout_curve_gaps: list = field(default_factory=list)  # [MASK] loss of one arm minus another of its vocabulary
    curve_png: Path | None = None  # heldout_curve.png: the gap to the unigram floor against token positions
    baselines: dict = field(default_factory=dict)  # task key -> its trivial baseline (TrivialBaseline.to_dict())
    baseline_checks: list = field(default_factory=list)  # arm vs its task's trivial baseline, per size and task
    no_signal: list = field(default_factory=list)  # {size, task, ...} where no arm beats the trivial baseline

    def arm(self, size: str, name: str) -> ArmResult:
        return next(a for a in self.arms if a.size == size and a.name == name)


def _start(cfg: AblationConfig, a: ArmResult) -> str:
    """The first column of a row: the size, or with a base where the arm's model starts."""
    if cfg.base is None:
        return a.size
    if a.init == "transfer":
        return f"the base, {a.name.split('.', 1)[0].removeprefix('transfer-') if len(cfg.transfer_methods) > 1 else cfg.transfer_methods[0]} rows"
    return {"general": "the base, as is", "continual": "the base", "scratch": "random weights"}[a.init]


def _cell(s: dict, digits: int = 3) -> str:
    return S.SeedSummary.from_dict({k: s[k] for k in ("mean", "std", "n", "values") if k in s}).format(digits)


def write_report(res: Results, arms: list[ArmResult], comparisons: list[dict], floors: list[dict],
                 rankings: list[dict], sentences: list[str], mlm_floors: list[dict],
                 probe_rankings: Sequence[dict] = ()) -> AblationReport:
    """ablation.md, ablation.json (every number, nothing that depends on how or when the jobs ran),
    ablation.png and costs.json (CPU and wall seconds of every job) in OUT."""
    cfg, out, tasks = res.cfg, res.out, res.tasks
    names = [leg.name for leg in res.legs]
    points, gaps = curve(res)
    held, held_gaps = heldout_curve(res), heldout_curve_gaps(res)
    baselines, checks, silent = baseline_checks(res)
    sentences = [*sentences, *no_signal_sentences(tasks, baselines, checks, silent, cfg),
                 *curve_plateau_sentences(held, cfg.budget, len(cfg.sizes) > 1),
                 *heldout_gap_sentences(held_gaps, len(cfg.sizes) > 1), *catch_up_sentences(gaps, res)]
    cost = cost_summary(res)
    md = format_report(cfg, tasks, arms, comparisons, floors, rankings, sentences, names, out, mlm_floors,
                       probe_rankings, points, gaps, cost, held, held_gaps, (baselines, checks, silent))
    with atomic_file(out / "ablation.md", force=True) as tmp:
        tmp.write_text(md, encoding="utf-8")
    write_json(out / "ablation.json", {
        "recipe": cfg.recipe(), "tokenizers": list(cfg.tokenizers), "reference": names[0],
        "command": command_line(cfg, out), "versions": versions_line(), "tasks": tasks,
        "arms": [asdict(a) for a in arms], "comparisons": comparisons, "floors": floors, "mlm_floors": mlm_floors,
        "rankings": rankings, "probe_rankings": list(probe_rankings), "curve": points, "curve_gaps": gaps,
        "heldout_curve": held, "heldout_curve_gaps": held_gaps, "verdicts": sentences, "pairs": cfg.pairs,
        "baselines": baselines, "baseline_checks": checks, "no_signal": silent,
        "per_pretrain_seed": per_pretrain_seed(res),
    }, indent=2)
    write_json(out / "costs.json", cost, indent=2)
    png = plot(cfg, tasks, arms, comparisons, names, out / "ablation.png", mlm_floors)
    curve_png = plot_heldout_curve(cfg, held, out / CURVE_PNG)
    return AblationReport(cfg, arms, tasks, comparisons, floors, rankings, sentences, md, out / "ablation.md",
                          out / "ablation.json", png, mlm_floors, list(probe_rankings), points, gaps, cost, held,
                          held_gaps, curve_png, baselines, checks, silent)


def per_pretrain_seed(res: Results) -> list[dict]:
    """Each arm's test score per task and pretraining seed: mean ± std over the fine-tuning seeds
    with its t-interval (the spread of fine-tuning only: one pretraining seed is one draw of the
    pretraining)."""
    cfg, out = res.cfg, []
    for size in cfg.sizes:
        for leg in res.legs:
            for task in cfg.tasks:
                runs = res.runs(size, leg.name, task)
                for p in cfg.pretrain_seeds:
                    values = [runs[f"p{p}-f{f}"]["score"] for f in cfg.seeds if f"p{p}-f{f}" in runs]
                    if not values:
                        continue
                    ci = S.seed_interval(values, cfg.confidence)
                    out.append({"size": size, "arm": leg.name, "task": task, "pretrain_seed": p,
                                **S.summarize_seeds(values).to_dict(),
                                "low": ci[0] if ci else None, "high": ci[1] if ci else None})
    return out


def cost_summary(res: Results) -> dict:
    """costs.json: every job's CPU seconds (``time.process_time`` of the process that ran it), wall
    seconds and device, in all and per arm (pretraining, evaluation, fine-tuning with its floors'
    and the curve's runs); the one cost format (benchmarks/experiments/time_to_verdict.py reads it)."""
    by_arm: dict[str, dict[str, float]] = {}
    for key, c in res.costs.items():
        kind, arm = key.split("/")[0], _arm_of(key)
        row = by_arm.setdefault(arm, {})
        row[kind] = round(row.get(kind, 0.0) + float(c.get("cpu_s", 0.0)), 1)
    return {"format": "biotok-costs/1", "unit": "seconds",
            "total_cpu_s": round(sum(float(c.get("cpu_s", 0.0)) for c in res.costs.values()), 1),
            "total_wall_s": round(sum(float(c.get("wall_s", 0.0)) for c in res.costs.values()), 1),
            "by_arm": dict(sorted(by_arm.items())), "jobs": dict(sorted(res.costs.items()))}


def _arm_of(key: str) -> str:
    """The arm (or shared part) a job's cost counts for: pretrain/S/ARM/..., prepare/V, probe."""
    parts = key.split("/")
    if parts[0] in ("pretrain", "evaluate", "finetune", "curve", "floor-model") and len(parts) > 2:
        return parts[2]
    if parts[0] == "transfer" and len(parts) == 3:  # transfer/METHOD/VOCAB
        return f"transfer-{parts[1]}.{parts[2]}"
    return f"{parts[0]}.{parts[1]}" if len(parts) > 1 else parts[0]  # prepare/V, init/V/pP, probe


def catch_up_sentences(gaps: Sequence[dict], res: Results) -> list[str]:
    """The curve's answer per arm, computed from the per-step verdicts: from which step it is no
    longer worse than the curve's reference, and whether it stays so."""
    out = []
    tasks = res.cfg.curve_task_list
    for size, task in ((size, task) for size in res.cfg.sizes for task in tasks):
        on = f" on {metric_label(res.tasks, task)}" if len(tasks) > 1 else ""
        for arm in dict.fromkeys(g["candidate_arm"] for g in gaps if g["size"] == size and g["task"] == task):
            rows = [g for g in gaps if g["size"] == size and g["candidate_arm"] == arm and g["task"] == task]
            ref, tried = rows[0]["reference_arm"], ", ".join(f"{g['step']:,}" for g in rows)
            first = next((g for g in rows if g["verdict"] != S.WORSE), None)
            if first is None:
                out.append(f"On the curve{on}, {arm} stays below {ref} at every step measured (k = {tried}): within "
                           f"{res.cfg.budget:,} steps it does not catch up.")
                continue
            when = "from the start (k = 0)" if first["step"] == 0 else f"after {first['step']:,} MLM steps"
            word = "better than" if first["verdict"] == S.BETTER else "indistinguishable from"
            later = all(g["verdict"] != S.WORSE for g in rows if g["step"] >= first["step"])
            out.append(f"On the curve{on}, {arm} is {word} {ref} {when}: {first['difference']:+.3f} [{first['low']:+.3f}, "
                       f"{first['high']:+.3f}]" + ("" if later else ", though a later step is worse again") + ".")
    return out


def format_report(cfg: AblationConfig, tasks: dict, arms: list[ArmResult], comparisons: list[dict],
                  floors: list[dict], rankings: list[dict], sentences: list[str], names: list[str],
                  out: str | os.PathLike[str], mlm_floors: Sequence[dict] = (),
                  probe_rankings: Sequence[dict] = (), points: Sequence[dict] = (), gaps: Sequence[dict] = (),
                  cost: dict | None = None, held: Sequence[dict] = (), held_gaps: Sequence[dict] = (),
                  baselines: tuple = ({}, [], [])) -> str:
    """ablation.md: budgets, results with intervals and verdicts (every pair with ``pairs="all"``),
    trivial baselines, floors, plateau, curve, probe, rankings, verdicts, costs, command.
    ``baselines``: (trivial baselines, arm-vs-baseline checks, no-signal tasks) of :func:`baseline_checks`."""
    lines = ["# Vocabulary ablation", "", _intro(cfg, names), "", *_budget_section(cfg, arms)]
    for size in cfg.sizes:
        lines += _results_section(cfg, tasks, arms, comparisons, floors, names, size, mlm_floors, baselines)
    if cfg.pairs == "all" and len(names) > 2:
        lines += _all_pairs_section(cfg, tasks, comparisons)
    if baselines[0]:
        lines += _baselines_section(cfg, tasks, *baselines)
    if floors or mlm_floors:
        lines += _floors_section(cfg, tasks, arms, floors, mlm_floors)
    if any(a.heldout_mlm for a in arms):
        lines += _plateau_section(cfg, arms)
    if held:
        lines += _heldout_curve_section(cfg, held, held_gaps)
    for task in dict.fromkeys(p["task"] for p in points):
        lines += _curve_section(cfg, tasks, [p for p in points if p["task"] == task],
                                [g for g in gaps if g["task"] == task])
    if any(a.probe for a in arms):
        lines += _probe_section(cfg, arms, probe_rankings)
    if rankings:
        lines += ["", "## Do the sizes agree?", ""] + [f"- {r['sentence']}" for r in rankings]
    lines += ["", "## Verdicts", ""] + [f"- {s}" for s in sentences]
    if cost:
        lines += _costs_section(cost)
    lines += _recipe_section(cfg, tasks, arms, out)
    return "\n".join(lines)


def _curve_section(cfg: AblationConfig, tasks: dict, points: Sequence[dict], gaps: Sequence[dict]) -> list[str]:
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


CURVE_PNG = "heldout_curve.png"


def _heldout_curve_section(cfg: AblationConfig, held: Sequence[dict], held_gaps: Sequence[dict] = ()) -> list[str]:
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


def plot_heldout_curve(cfg: AblationConfig, held: Sequence[dict], path: Path) -> Path | None:
    """heldout_curve.png (none without a curve: a stale one is removed): per size, the gap to the
    unigram floor against the token positions trained on, one line per arm, its interval shaded;
    symmetric-log where the gaps span more than one nat (a start far above the floor would flatten the rest).
    Byte-stable: no software or date in the file."""
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


def _columns(cfg: AblationConfig) -> tuple[str, str]:
    """The headers of the first two columns: what a row's model is, and what names it."""
    return ("starts from", "arm") if cfg.base is not None else ("size", "tokenizer")


def _intro(cfg: AblationConfig, names: list[str]) -> str:
    if cfg.base is not None:
        methods = ", ".join(f"`{m}`" for m in cfg.transfer_methods)
        said = {"general": f"*general* is the base model `{cfg.base}` as it is (fine-tuned only)",
                "continual": "*continual* continues the base with its own vocabulary",
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


def _budget_section(cfg: AblationConfig, arms: list[ArmResult]) -> list[str]:
    first, who = _columns(cfg)
    lines = ["## Budget", "",
             "Same steps, batch and sequence length for every arm. A vocabulary with fewer pieces per word "
             "covers more characters of text with the same tokens: *characters seen* credits it.", "",
             f"| {first} | {who} | vocab | fertility | pieces/line | tokens seen | chars/token | characters seen | epochs |",
             "|---|---|---|---|---|---|---|---|---|"]
    for a in arms:
        lines.append(f"| {_start(cfg, a)} | {a.name} | {a.vocab_size:,} | {a.fertility:.3f} | {a.pieces_per_line:.1f} | "
                     f"{a.tokens_seen:,} | {a.chars_per_token:.2f} | {a.chars_seen:,} | {a.epochs:.2f} |")
    return lines


def _plateau_section(cfg: AblationConfig, arms: list[ArmResult]) -> list[str]:
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


def _probe_section(cfg: AblationConfig, arms: list[ArmResult], probe_rankings: Sequence[dict]) -> list[str]:
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


def _results_section(cfg: AblationConfig, tasks: dict, arms: list[ArmResult], comparisons: list[dict],
                     floors: list[dict], names: list[str], size: str, mlm_floors: Sequence[dict],
                     baselines: tuple = ({}, [], [])) -> list[str]:
    """One size's table: each arm's mean ± std per metric, with its Δ against the reference and
    verdict; the last row each task's trivial baseline (no model), its metric marked "no signal"
    where no arm beats it."""
    keys = [MLM, *cfg.tasks]
    silent = {s["task"] for s in baselines[2] if s["size"] == size}
    lines = ["", f"## Results {at_size(size).lower()}", "",
             f"Mean ± std over seeds; Δ: candidate minus {names[0]}, with its {cfg.confidence:.0%} paired bootstrap "
             f"interval over test examples pooled across seeds, and the verdict."
             + (" Last row: each task's trivial baseline (the best constant answer, chosen on train; no model); "
                "**no signal**: no arm beats it." if baselines[0] else ""), ""]
    head = [_columns(cfg)[1]]
    for k in keys:
        head += [metric_label(tasks, k) + (" (**no signal**)" if k in silent else ""), "Δ [CI]", "verdict"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in names:
        a = next(x for x in arms if x.size == size and x.name == n)
        cells = [n]
        for k in keys:
            summary = a.mlm.get("top1") if k == MLM else a.metrics[k]
            if summary is None:  # the base as it is: not pretrained here, no masked-word numbers
                cells += ["—", "", ""]
                continue
            low = any(f["size"] == size and f["task"] == k and f["arm"] == n and not f["beats_floor"]
                      for f in (mlm_floors if k == MLM else floors))
            cells.append(_cell(summary) + (" ⚠ not above floor" if low else ""))
            c = next((c for c in comparisons if c["size"] == size and c["task"] == k and c["candidate_arm"] == n
                      and c["reference_arm"] == names[0]), None)
            if c is None:
                cells += ["reference" if n == names[0] else "", ""]
            else:
                cells += [f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]", f"**{c['verdict']}**"]
        lines.append("| " + " | ".join(cells) + " |")
    if baselines[0]:
        cells = ["trivial baseline", "—", "", ""]
        for k in cfg.tasks:
            cells += [f"{baselines[0][k]['test']:.3f}", "", ""]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _all_pairs_section(cfg: AblationConfig, tasks: dict, comparisons: list[dict]) -> list[str]:
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
                             + ("≈" if c["verdict"] == S.INDISTINGUISHABLE else c["verdict"]))
            lines.append("| " + (f"{size} | " if sized else "") + f"{cand} − {ref} | " + " | ".join(cells) + " |")
    return lines


def _baselines_section(cfg: AblationConfig, tasks: dict, baselines: dict, checks: list[dict],
                       silent: list[dict]) -> list[str]:
    """Each task's trivial baseline (rule, dev and test scores) and which arms beat it."""
    lines = ["", "## Trivial baselines", "",
             "The best constant answer of each task, chosen on its train split with the task's own metric and "
             "scored with it (no model): the number an arm must beat before its score means anything. Beaten: "
             f"the arm's {cfg.confidence:.0%} paired bootstrap interval over test examples (seeds pooled) lies above "
             "it.", "", "| size | task | trivial answer | dev | test | arms that beat it | signal |",
             "|---|---|---|---:|---:|---|---|"]
    for size in cfg.sizes:
        for t in cfg.tasks:
            b = baselines[t]
            beat = [c["arm"] for c in checks if c["size"] == size and c["task"] == t and c["beats_baseline"]]
            n = sum(1 for c in checks if c["size"] == size and c["task"] == t)
            quiet = any(s["size"] == size and s["task"] == t for s in silent)
            lines.append(f"| {size} | {metric_label(tasks, t)} | {b['rule']} | {b['dev']:.3f} | {b['test']:.3f} | "
                         f"{len(beat)} of {n}" + (f" ({', '.join(beat)})" if beat else "") + " | "
                         + ("**no signal**" if quiet else "yes") + " |")
    return lines


def _floors_section(cfg: AblationConfig, tasks: dict, arms: list[ArmResult], floors: list[dict],
                    mlm_floors: Sequence[dict]) -> list[str]:
    first, who = _columns(cfg)
    lines = ["", "## Floors", "",
             "Each task fine-tuned the same way from a randomly initialised model of the same size and "
             "vocabulary: how much pretraining bought. Masked words: always answering the most frequent word "
             f"of the pretraining text, on the same words. Δ: pretrained minus floor ({cfg.confidence:.0%} interval).",
             "", f"| {first} | task | {who} | floor | pretrained | Δ [CI] | beats its floor |",
             "|---|---|---|---|---|---|---|"]
    for f in [*mlm_floors, *floors]:
        a = next(x for x in arms if x.size == f["size"] and x.name == f["arm"])
        if f["task"] == MLM:
            floor_cell, pre = f"{f['reference']:.3f} (always “{f['word']}”)", _cell(a.mlm["top1"])
        else:
            floor_cell, pre = f"{_cell(a.floors[f['task']])} (random init)", _cell(a.metrics[f["task"]])
        lines.append(f"| {_start(cfg, a)} | {metric_label(tasks, f['task'])} | {f['arm']} | {floor_cell} | "
                     f"{pre} | {f['difference']:+.3f} [{f['low']:+.3f}, {f['high']:+.3f}] | "
                     f"{'yes' if f['beats_floor'] else '**no**'} |")
    return lines


def _recipe_section(cfg: AblationConfig, tasks: dict, arms: list[ArmResult], out: str | os.PathLike[str]) -> list[str]:
    seeds = len(cfg.pretrain_seeds) * len(cfg.seeds)
    ft = cfg.finetune
    model = (f"MLM from the base `{cfg.base}` (arms {', '.join(cfg.arms)})" if cfg.base is not None
             else f"BERT MLM (sizes {', '.join(cfg.sizes)})")
    return ["", "## Recipe", "",
            f"- Pretraining: {model}, {cfg.budget} steps, batch {cfg.batch_size}, "
            f"sequence length {cfg.seq_len}, peak lr {cfg.lr:g}; the corpus minus each {cfg.heldout_every}th line.",
            f"- Fine-tuning: {ft.epochs} epochs, lr {ft.optim.lr:g}, batch {ft.batch_size}"
            + (f", at most {ft.max_steps} steps" if ft.max_steps else "")
            + (f", {ft.train_fraction:g} of the training examples" if ft.train_fraction < 1 else "")
            + f", early stopping on dev (patience {ft.patience}); scored on test. Seed pairs per arm and task: {seeds}.",
            "- Tasks: " + "; ".join(f"{t['name']} ({t['type']}, {t['metric']}, {t['n_test']} test examples)"
                                    for t in tasks.values()) + ".",
            f"- Masked words: whole-word top-k on {max((a.mlm_words for a in arms), default=0)} held-out words, the same for "
            "every arm (the interval pairs the words both arms could score).",
            f"- Statistics: paired percentile bootstrap, {cfg.n_resamples} resamples of test examples (each drawn "
            "with all its seeds), fixed seed 0; verdict better/worse when the interval excludes 0.",
            "", "## Command and versions", "", "```", command_line(cfg, out), "```", "", versions_line(), ""]


def versions_line() -> str:
    return versions_sentence(("python", "biotok", "torch", "transformers", "tokenizers", "seqeval", "scipy", "numpy"))


def plot(cfg: AblationConfig, tasks: dict, arms: list[ArmResult], comparisons: list[dict], names: list[str],
         path: Path, mlm_floors: Sequence[dict] = ()) -> Path:
    """One row per size, one panel per metric: mean ± std bars, each seed a dot, the floor a dashed
    line, and each candidate's verdict above its bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [MLM, *cfg.tasks]
    fig, axes = plt.subplots(len(cfg.sizes), len(keys), figsize=(3.6 * len(keys) + 0.6, 3.4 * len(cfg.sizes)),
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, size in enumerate(cfg.sizes):
        for j, k in enumerate(keys):
            ax = axes[i][j]
            top = 0.05
            for x, n in enumerate(names):
                a = next(v for v in arms if v.size == size and v.name == n)
                s = a.summary(k)
                if s is None:
                    continue
                ax.bar(x, s.mean, 0.6, yerr=s.std or 0, capsize=4, color=colors[x % len(colors)], alpha=0.85)
                ax.plot([x] * len(s.values), s.values, "k.", ms=5)
                top = max(top, s.mean + (s.std or 0), *s.values)
                wf = next((f for f in mlm_floors if f["size"] == size and f["arm"] == n), None) if k == MLM else None
                if wf is not None or (k != MLM and k in a.floors):
                    fl = wf["reference"] if wf is not None else a.floors[k]["mean"]
                    label = (f"always “{wf['word']}”" if wf is not None else "floor (random init)") if x == 0 else None
                    ax.plot([x - 0.35, x + 0.35], [fl, fl], "k--", lw=1.2, label=label)
                    top = max(top, fl)
                c = next((c for c in comparisons if c["size"] == size and c["task"] == k and c["candidate_arm"] == n
                          and c["reference_arm"] == names[0]), None)
                if c is not None:
                    ax.annotate(c["verdict"] if c["verdict"] != S.INDISTINGUISHABLE else "≈", (x, s.mean + (s.std or 0)),
                                xytext=(0, 4), textcoords="offset points", ha="center", fontsize=8)
            ax.set_xticks(range(len(names)), names, rotation=15, fontsize=8)
            ax.set_ylim(0, min(1.0, top * 1.25))
            ax.set_title(f"{metric_label(tasks, k)} · {size}", fontsize=9)
            if ((k == MLM and mlm_floors) or (k != MLM and cfg.floor and j == 1)) and ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7, loc="best")
    fig.suptitle(f"{cfg.budget} steps × {cfg.batch_size} × {cfg.seq_len} per arm; mean ± std over seeds "
                 f"(verdicts vs {names[0]}: {cfg.confidence:.0%} paired bootstrap)", fontsize=9)
    fig.tight_layout()
    with atomic_file(path, force=True) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
    return path


def publish(report: AblationReport, out: Path, *, title: str, command: str, intro: Sequence[str] = ()) -> Path:
    """A published result in ``out``: README.md (``title``, the command that regenerates it, ``intro``,
    then the ablation's own report) beside ablation.json, costs.json, ablation.png and (with a
    curve) heldout_curve.png, each replaced atomically. Returns README.md."""
    import shutil  # lazy: one use

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
    import json  # lazy: only the published README reads these files

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
