"""``biotok decide``: read every piece of evidence a user has made and state one pick.

The evidence is the JSON that biotok's commands write: ``biotok compare --json`` (fertility),
``biotok sweep`` (sweep.json: the size), ``biotok-train probe`` (probe.json: bits per character
with paired bootstrap intervals) and ``biotok-train ablate`` (ablation.json: masked-word top-1
and each task's metric, with intervals, floors and the plateau). Only JSON is read: this module
imports neither torch nor biotok_train.

Each pairwise finding is kept or discarded with its reason (an arm that never left the unigram
plateau, a task on which no arm beats its floor or trivial baseline, fewer pretraining or
training seeds than an interval needs, a probe on raw text of vocabularies that normalize
differently). The pick comes from the most direct instrument that still holds a verdict
(downstream tasks, then the models' own held-out scores, then the tokenizer's statistics), by
wins minus losses; where the instruments disagree the page says so, and when nothing downstream
decides it says what would settle it and what that costs (measured rates, named).
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from biotok.config import DecideConfig
from biotok.errors import ConfigError, DamagedFileError
from biotok.io import read_json

DOWNSTREAM, MODEL, STATISTIC = 1, 2, 3
TIER_LABELS = {DOWNSTREAM: "downstream task", MODEL: "the models' held-out scores", STATISTIC: "tokenizer statistics"}
CERTAINTY = {  # how sure a pick is, by the tier that decided it
    DOWNSTREAM: "firm",
    MODEL: "indicative",
    STATISTIC: "weak",
}
MARKERS = ("ablation.json", "probe.json", "sweep.json")  # what makes a folder evidence (besides compare JSON)


@dataclass(frozen=True)
class Finding:
    """One comparison of two arms by one instrument: who is better (None: not told apart), the
    difference (candidate minus reference, in ``unit``) and its interval; ``void``: why it is
    discarded ('' when kept)."""

    instrument: str
    tier: int
    reference: str
    candidate: str
    better: str | None
    difference: float
    low: float | None
    high: float | None
    unit: str
    source: str
    detail: str = ""  # what the interval is over, or how the values compare
    void: str = ""

    @property
    def kept(self) -> bool:
        return not self.void

    @property
    def worse(self) -> str | None:
        if self.better is None:
            return None
        return self.candidate if self.better == self.reference else self.reference

    def numbers(self) -> str:
        ci = f" [{self.low:+.3f}, {self.high:+.3f}]" if self.low is not None and self.high is not None else ""
        return f"{self.difference:+.3f}{ci} {self.unit}".rstrip()

    def sentence(self) -> str:
        if self.better is None:
            what = f"cannot tell {self.candidate} from {self.reference}"
        else:
            what = f"finds {self.better} better than {self.worse}"
        tail = f"; {self.detail}" if self.detail else ""
        return f"{self.instrument} {what}: {self.candidate} minus {self.reference} {self.numbers()}{tail}."


@dataclass(frozen=True)
class Discarded:
    """Evidence left out as a whole (an instrument, a task), with the reason."""

    instrument: str
    source: str
    reason: str


@dataclass(frozen=True)
class Settle:
    """A run that would settle the question, with its estimated cost."""

    what: str
    command: str
    hours: float
    unit: str  # "CPU-hours" or "GPU-hours"
    basis: str  # how the estimate is computed, from which measured rate

    def sentence(self) -> str:
        return f"{self.what}: about {_hours(self.hours)} {self.unit} ({self.basis})."


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` concludes (``markdown``, ``html_section``, ``as_dict`` render it)."""

    arms: tuple[str, ...]
    pick: str | None
    certainty: str  # firm, indicative, weak, none
    tier: int | None
    scores: dict
    summary: str
    findings: tuple[Finding, ...]
    discarded: tuple[Discarded, ...]
    disagreements: tuple[str, ...]
    context: tuple[str, ...]  # evidence that bears on no pair of arms (the sweep's sizes)
    settle: tuple[Settle, ...]
    sources: tuple[str, ...]

    def as_dict(self) -> dict:
        return {"arms": list(self.arms), "pick": self.pick, "certainty": self.certainty, "tier": self.tier,
                "scores": self.scores, "summary": self.summary,
                "findings": [{**f.__dict__, "kept": f.kept} for f in self.findings],
                "discarded": [d.__dict__ for d in self.discarded], "disagreements": list(self.disagreements),
                "context": list(self.context), "settle": [s.__dict__ for s in self.settle],
                "sources": list(self.sources)}

    def lines(self) -> dict[str, list[str]]:
        """The page's parts as sentences: for and against the pick, kept, discarded, disagreements,
        context, settle."""
        kept = [f.sentence() for f in self.findings if f.kept]
        void = [f"{d.instrument} ({d.source}): {d.reason}." for d in self.discarded]
        void += [f"{f.sentence()[:-1]}: discarded ({f.void})." for f in self.findings if not f.kept]

        def brief(f: Finding) -> str:
            other = f.worse if f.better == self.pick else f.better
            return (f"{f.instrument}, against {other}: {f.candidate} minus {f.reference} {f.numbers()}"
                    + (f" (discarded: {f.void})" if f.void else "") + ".")

        pro = [brief(f) for f in self.findings if self.pick and f.better == self.pick]
        con = [brief(f) for f in self.findings if self.pick and f.worse == self.pick]
        return {"for": pro, "against": con, "kept": kept, "discarded": void,
                "disagreements": list(self.disagreements), "context": list(self.context),
                "settle": [s.sentence() for s in self.settle]}

    def _titles(self) -> tuple[tuple[str, str], ...]:
        return ((f"For {self.pick}", "for"), (f"Against {self.pick}", "against"), ("Evidence kept", "kept"),
                ("Evidence discarded", "discarded"), ("Where the instruments disagree", "disagreements"),
                ("Context", "context"), ("What would settle it", "settle"))

    def markdown(self, level: int = 1) -> str:
        h = "#" * level
        parts = self.lines()
        out = [f"{h} Decision", "", self.summary, ""]
        for title, key in self._titles():
            if parts[key]:
                out += [f"{h}# {title}", "", *[f"- {s}" for s in parts[key]], ""]
        for s in self.settle:
            out += [f"`{s.command}`", ""] if s.command else []
        out += [f"{h}# Sources", "", *[f"- `{s}`" for s in self.sources], ""]
        return "\n".join(out)

    def html_section(self) -> str:
        """The decision as one ``<section id="decision">`` (escaped; the report's CSS styles it)."""
        e = html.escape
        parts = self.lines()
        body = [f'<p class="lead"><b>{e(self.summary)}</b></p>']
        for title, key in self._titles():
            if parts[key]:
                body.append(f"<h3>{e(title)}</h3><ul>" + "".join(f"<li>{e(s)}</li>" for s in parts[key]) + "</ul>")
        cmds = [s.command for s in self.settle if s.command]
        if cmds:
            body.append('<div class="cmd">' + "<br>".join(f"<code>{e(c)}</code>" for c in cmds) + "</div>")
        body.append('<p class="note">Sources: ' + e(", ".join(self.sources)) + "</p>")
        return f'<section id="decision"><h2>Decision</h2>{"".join(body)}</section>'


# --- reading evidence -----------------------------------------------------------------------------
@dataclass
class _Evidence:
    findings: list[Finding] = field(default_factory=list)
    discarded: list[Discarded] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    arms: list[str] = field(default_factory=list)
    ablations: list[tuple[str, dict]] = field(default_factory=list)  # (source, ablation.json) for the costs
    sources: list[str] = field(default_factory=list)

    def arm(self, name: str) -> None:
        if name not in self.arms:
            self.arms.append(name)


def evidence_files(paths: Iterable[str | Path]) -> list[Path]:
    """The evidence files of ``paths``: a file as it is; a folder's ablation.json, probe.json or
    sweep.json, or those of its subfolders (one level: a probe's raw/ and fair/) when it has none."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            out.append(p)
            continue
        if not p.is_dir():
            raise ConfigError(f"evidence not found: {p}")
        mine = [p / m for m in MARKERS if (p / m).is_file()]
        if not mine:
            try:
                subs = sorted(x for x in p.iterdir() if x.is_dir())
            except OSError as e:
                raise ConfigError(f"cannot read the evidence folder {p}: {e.strerror or e}") from None
            mine = [q / m for q in subs for m in MARKERS if (q / m).is_file()]
        if not mine and (p / "report.md").is_file():
            raise ConfigError(f"{p} is a biotok report: its numbers are not kept as JSON; give `biotok compare ... "
                              "--json > compare.json` instead, or write the report with --decide-from to put the "
                              "decision in it")
        if not mine:
            raise ConfigError(f"{p} holds no evidence (no {', '.join(MARKERS)} in it or its subfolders); give a "
                              "folder written by biotok-train ablate or probe, biotok sweep, or a `biotok compare "
                              "--json` file")
        out += mine
    seen: set[Path] = set()
    return [f for f in out if not (f.resolve() in seen or seen.add(f.resolve()))]


def _kind(d: dict) -> str | None:
    if "arms" in d and "comparisons" in d and "recipe" in d:
        return "ablation"
    if "arms" in d and "comparisons" in d and "setup" in d:
        return "probe"
    if "points" in d and "algo" in d:
        return "sweep"
    if "corpus" in d and isinstance(d.get("corpus"), dict) and "tokenizers" in d["corpus"]:
        return "compare"
    if "tokenizers" in d and isinstance(d["tokenizers"], list) and d["tokenizers"] and "fertility" in d["tokenizers"][0]:
        return "compare"  # a Comparison.as_dict() on its own
    return None


def read_evidence(paths: Iterable[str | Path], config: DecideConfig | None = None) -> _Evidence:
    """Every finding of the evidence files under ``paths`` (see :func:`evidence_files`)."""
    cfg = config or DecideConfig()
    ev = _Evidence()
    for f in evidence_files(paths):
        try:
            d = read_json(f, advice="give the file a biotok command wrote")
        except FileNotFoundError:
            raise ConfigError(f"evidence not found: {f}") from None
        except (IsADirectoryError, PermissionError, OSError) as e:
            raise ConfigError(f"cannot read evidence {f}: {e.strerror or e}") from None
        kind = _kind(d)
        if kind is None and "vocab" in d and "tokenizers" in d:
            raise ConfigError(f"{f}: this `biotok compare --json` measured no corpus, so it holds no fertility; "
                              "rerun it with --corpus HELD_OUT")
        if kind is None:
            raise ConfigError(f"{f} is not evidence biotok decide reads (an ablation.json, probe.json, sweep.json "
                              "or `biotok compare --json` output)")
        try:
            {"ablation": _ablation, "probe": _probe, "sweep": _sweep, "compare": _compare}[kind](ev, d, str(f), cfg)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            article = "an" if kind[0] in "aeiou" else "a"
            raise DamagedFileError(f"{f} is damaged ({article} {kind} output without the fields it should have: "
                                   f"{type(e).__name__} {e}); give the file a biotok command wrote", f) from None
        ev.sources.append(str(f))
    return ev


def add_comparison(ev: _Evidence, comparison: dict, source: str, cfg: DecideConfig | None = None) -> None:
    """Fertility from a :class:`biotok.metrics.Comparison`'s ``as_dict()`` (the report's own corpus)."""
    _compare(ev, {"corpus": comparison}, source, cfg or DecideConfig())
    ev.sources.append(source)


def _verdict_better(c: dict, ref: str, cand: str) -> str | None:
    v = c.get("verdict")
    if v == "better":
        return cand
    if v == "worse":
        return ref
    return None


def _seeds_reason(n: int, what: str, flag: str, cfg: DecideConfig) -> tuple[str, str]:
    """(the short reason each finding gives, the full one said once) when ``n`` seeds are too few."""
    if n >= cfg.min_seeds:
        return "", ""
    short = f"{n} {what} seed{'s' if n != 1 else ''}, fewer than {cfg.min_seeds}"
    return short, (f"{short}: its intervals cover the test examples, not the spread between {what}s "
                   f"(rerun with {flag}; `biotok decide --min-seeds {n}` accepts it)")


def _below_floor(size: str, task: str, label: str, names, floors: dict, base_checks: dict) -> list[str]:
    """Why a comparison on a task with signal is still void: an arm of it below its random-init
    floor, else below the trivial baseline."""
    why = []
    for name in names:
        f = floors.get((size, task, name))
        b = base_checks.get((size, task, name))
        if f is not None and not f.get("beats_floor", True):
            why.append(f"{name} does not beat its random-init floor on {label} ({_f(f['candidate'])} vs "
                       f"{_f(f['reference'])})")
        elif b is not None and not b.get("beats_baseline", True):
            why.append(f"{name} does not beat the trivial baseline on {label} ({_f(b['candidate'])} vs "
                       f"{_f(b['reference'])})")
    return why


def _void_tasks(d: dict, sizes: list[str], tasks: dict, floors: dict, silent: dict, at) -> dict[tuple[str, str], str]:
    """{(size, task): reason} for the tasks without signal: no arm beats the trivial baseline, or
    none beats its random-init floor (in size order, then task order)."""
    void_task: dict[tuple[str, str], str] = {}
    for size in sizes:
        arms_here = [a["name"] for a in d["arms"] if a["size"] == size]
        for task in tasks:
            label = _task_label(tasks, task)
            if (size, task) in silent:
                s = silent[(size, task)]
                void_task[(size, task)] = (f"no signal on {label}{at(size)}: no arm beats the trivial baseline "
                                           f"({_f(s.get('baseline'))} on test; best arm {s.get('best_arm')} "
                                           f"{_f(s.get('best'))})")
                continue
            fl = [floors[(size, task, n)] for n in arms_here if (size, task, n) in floors]
            if fl and not any(f.get("beats_floor") for f in fl):
                scores = ", ".join(f"{f['arm']} {_f(f['candidate'])} vs {_f(f['reference'])}" for f in fl)
                void_task[(size, task)] = (f"no signal on {label}{at(size)}: no arm beats its random-init floor "
                                           f"(pretrained vs floor: {scores})")
    return void_task


def _ablation_fertility(ev: _Evidence, d: dict, sizes: list[str], source: str, cfg: DecideConfig, at) -> None:
    """Fertility of the first size whose arms hold more than one vocabulary (an ablation without a probe)."""
    for size in sizes:
        arms_here = [a for a in d["arms"] if a["size"] == size and a.get("fertility") is not None]
        if len({a["vocabulary"] if "vocabulary" in a else a["name"] for a in arms_here}) > 1:
            _fertility_pairs(ev, [(a["name"], float(a["fertility"])) for a in arms_here],
                             f"fertility on the ablation's corpus{at(size)}", source, cfg)
            break


def _plateau_reasons(ev: _Evidence, d: dict, source: str, at: Callable[[str], str]) -> Callable[..., str]:
    """``plateau_reason(size, arm, masked_words)`` of ablation ``d``: why an arm's comparisons say nothing
    (each full reason added to ``ev.discarded`` once)."""
    plateau = {(a["size"], a["name"]): a["heldout_mlm"] for a in d["arms"] if a.get("heldout_mlm")}
    mlm_floor = {(f["size"], f["arm"]): f for f in d.get("mlm_floors", [])}
    said: set[tuple[str, str, str]] = set()

    def plateau_reason(size: str, name: str, masked_words: bool = False) -> str:
        """'' when ``name`` left the plateau (or nothing says), else a short reason (the full one said
        once). ``masked_words``: also void when its masked-word top-1 is no better than always the most
        frequent word, even past the plateau of the held-out loss (that metric then has no signal)."""
        h = plateau.get((size, name))
        m = mlm_floor.get((size, name))
        if h is not None and not h.get("left_plateau", True):
            key, short = (size, name, "plateau"), f"{name} never left the plateau"
            full = (f"{name}{at(size)} never left the unigram plateau: held-out [MASK] loss minus unigram floor "
                    f"{h['gap']:+.3f} [{h['gap_low']:+.3f}, {h['gap_high']:+.3f}] nats, so it predicts from piece "
                    "frequencies only and its comparisons say nothing about its vocabulary")
        elif m is not None and not m.get("beats_floor", True) and (h is None or masked_words):
            key = (size, name, "words")
            short = (f"{name} never left the plateau" if h is None
                     else f"{name}'s masked-word top-1 is no better than always “{m.get('word', '?')}”")
            full = (f"{name}{at(size)}'s masked-word top-1 ({_f(m['candidate'])}) is no better than always answering "
                    f"“{m.get('word', '?')}” ({_f(m['reference'])})"
                    + (": it has not left the plateau, so its comparisons say nothing about its vocabulary" if h is None
                       else ": the masked-word comparison says nothing about its vocabulary"))
        else:
            return ""
        if key not in said:
            said.add(key)
            ev.discarded.append(Discarded(f"the ablation's arm {name}{at(size)}", source, full))
        return short

    return plateau_reason


def _ablation(ev: _Evidence, d: dict, source: str, cfg: DecideConfig) -> None:
    recipe = d["recipe"]
    ev.ablations.append((source, d))
    pseeds = len(recipe.get("pretrain_seeds") or [0])
    sizes = sorted({a["size"] for a in d["arms"]})
    tasks = d.get("tasks", {})
    for a in d["arms"]:
        ev.arm(a["name"])

    def at(size: str) -> str:
        return f" at size {size}" if len(sizes) > 1 else ""

    floors = {(f["size"], f["task"], f["arm"]): f for f in d.get("floors", [])}
    base_checks = {(c["size"], c["task"], c["arm"]): c for c in d.get("baseline_checks", [])}
    silent = {(s["size"], s["task"]): s for s in d.get("no_signal", [])}
    seeds_void, seeds_full = _seeds_reason(pseeds, "pretraining", "--pretrain-seeds 0 1 2", cfg)
    if seeds_full:
        ev.discarded.append(Discarded("the ablation's verdicts", source, seeds_full))

    void_task = _void_tasks(d, sizes, tasks, floors, silent, at)
    for key, reason in void_task.items():
        ev.discarded.append(Discarded(f"ablation, {_task_label(tasks, key[1])}{at(key[0])}", source, reason))

    plateau_reason = _plateau_reasons(ev, d, source, at)

    for c in d["comparisons"]:
        size, task, ref, cand = c["size"], c["task"], c["reference_arm"], c["candidate_arm"]
        mlm = task == "mlm"
        label = "masked-word top-1" if mlm else _task_label(tasks, task)
        why = [r for r in (plateau_reason(size, ref, mlm), plateau_reason(size, cand, mlm)) if r]
        if not mlm:
            why = ([f"no signal on {label}{at(size)}"] if (size, task) in void_task
                   else why + _below_floor(size, task, label, (ref, cand), floors, base_checks))
        if seeds_void:
            why.append(seeds_void)
        unit = "" if mlm else (c.get("metric") or "")
        detail = (f"{c.get('confidence', 0.95):.0%} paired bootstrap over {c.get('n_clusters', '?')} "
                  f"{'held-out words' if mlm else 'test examples'}, {pseeds} pretraining seed(s)")
        ev.findings.append(Finding(
            instrument=f"the ablation's {label}{at(size)}", tier=MODEL if mlm else DOWNSTREAM, reference=ref,
            candidate=cand, better=_verdict_better(c, ref, cand), difference=float(c["difference"]),
            low=_num(c.get("low")), high=_num(c.get("high")), unit=unit, source=source, detail=detail,
            void="; ".join(dict.fromkeys(why))))
    _ablation_probe(ev, d, source, cfg, at)
    if not any(f.source == source and f.tier == STATISTIC for f in ev.findings):
        _ablation_fertility(ev, d, sizes, source, cfg, at)


def _ablation_probe(ev: _Evidence, d: dict, source: str, cfg: DecideConfig, at) -> None:
    """The causal-LM probe an ablation ran beside its arms (``--probe``): each arm against the
    ablation's reference, void when either is not below its unigram floor or seeds are too few."""
    ref = d.get("reference")
    by = {(a["size"], a["name"]): a.get("probe") or {} for a in d["arms"]}
    for (size, name), p in by.items():
        v = p.get("versus_reference")
        if not v or name == ref or (size, ref) not in by:
            continue
        n = int((p.get("bits_per_char") or {}).get("n", 1))
        why = []
        for arm in (ref, name):
            fl = by[(size, arm)].get("versus_floor") or {}
            if fl and fl.get("verdict") != "better":
                why.append(f"{arm} is not below its unigram floor")
        short, _ = _seeds_reason(n, "training", "", cfg)
        why += [short] if short else []
        ev.findings.append(Finding(
            instrument=f"the ablation's causal-LM probe (bits/char){at(size)}", tier=MODEL, reference=ref,
            candidate=name, better=_verdict_better(v, ref, name), difference=float(v["difference"]),
            low=_num(v.get("low")), high=_num(v.get("high")), unit="bits/char", source=source,
            detail=f"paired bootstrap over held-out documents, {n} seed(s)", void="; ".join(why)))


def _probe(ev: _Evidence, d: dict, source: str, cfg: DecideConfig) -> None:
    setup = d["setup"]
    seeds = len(setup.get("seeds") or [0])
    text = setup.get("text", "raw")
    label = f"the causal-LM probe ({'raw text' if text == 'raw' else 'fair text'}, bits/char)"
    norms = {a["name"]: a.get("normalization", "") for a in d["arms"]}
    for a in d["arms"]:
        ev.arm(a["name"])
    floor_void = {}
    for a in d["arms"]:
        v = a["versus_floor"]
        if v.get("verdict") != "better":
            floor_void[a["name"]] = (f"{a['name']} is not below its unigram floor ({v['difference']:+.3f} "
                                     f"[{v['low']:+.3f}, {v['high']:+.3f}] bits/char): it has not learned beyond "
                                     "piece frequencies")
    unlike = ""
    if text == "raw" and len(set(norms.values())) > 1:
        unlike = "raw text of vocabularies that normalize differently"
        ev.discarded.append(Discarded(label, source, (
            "not like for like: the arms normalize differently (" + "; ".join(f"{k} {v}" for k, v in norms.items())
            + ") and the probe scored the raw text, so an arm that discards information predicts less than the "
              "text holds (rerun the probe with --fair)")))
    seeds_void, seeds_full = _seeds_reason(seeds, "training", "--seeds 0 1 2", cfg)
    if seeds_full:
        ev.discarded.append(Discarded(label, source, seeds_full))
    for c in d["comparisons"]:
        ref, cand = c["reference_arm"], c["candidate_arm"]
        why = [r for r in (floor_void.get(ref), floor_void.get(cand), unlike, seeds_void) if r]
        ev.findings.append(Finding(
            instrument=label, tier=MODEL, reference=ref, candidate=cand, better=_verdict_better(c, ref, cand),
            difference=float(c["difference"]), low=_num(c.get("low")), high=_num(c.get("high")), unit="bits/char",
            source=source, detail=f"{c.get('confidence', 0.95):.0%} paired bootstrap over "
                                  f"{c.get('n_clusters', '?')} held-out documents, {seeds} seed(s)",
            void="; ".join(dict.fromkeys(why))))


def _sweep(ev: _Evidence, d: dict, source: str, cfg: DecideConfig) -> None:
    pts = d["points"]
    sizes = ", ".join(f"{p['vocab_size']:,} ({p['fertility']:.3f})" for p in pts)
    knee = d.get("knee")
    zipf = d.get("zipf_best")
    s = (f"The sweep ({d['algo']}, {d.get('eval_lines', 0):,} held-out lines) measured fertility at sizes {sizes}: "
         + (f"the knee of the fertility curve is at {knee:,}" if knee else "no knee was found"))
    if zipf:
        s += f"; the best Zipf fit is at {zipf:,}"
    indist = d.get("zipf_indistinguishable") or d.get("zipf_tied")
    if indist:
        s += f" (indistinguishable from {', '.join(f'{x:,}' for x in indist)})"
    ev.context.append(s + f" ({source}). It chooses a size for one algorithm, not between the arms.")


def _compare(ev: _Evidence, d: dict, source: str, cfg: DecideConfig) -> None:
    rows = d["corpus"]["tokenizers"]
    lower = {t["name"]: t.get("lowercase") for t in d.get("tokenizers", []) if isinstance(t, dict)}
    for r in rows:
        ev.arm(r["name"])
    words = rows[0].get("words", 0)
    _fertility_pairs(ev, [(r["name"], float(r["fertility"])) for r in rows],
                     f"fertility on {words:,} words of the compared corpus", source, cfg, lower)


def _fertility_pairs(ev: _Evidence, values: Sequence[tuple[str, float]], label: str, source: str,
                     cfg: DecideConfig, lower: dict | None = None) -> None:
    """Every pair by fertility (pieces per word, lower is better): a measurement with no interval,
    so a relative gap under ``cfg.fertility_tolerance`` is not told apart."""
    lower = lower or {}
    lowered = [n for n, _ in values if lower.get(n)]
    note = f"; {', '.join(lowered)} lowercase{'s' if len(lowered) == 1 else ''} first, which lowers fertility" \
        if lowered and len(lowered) < len(values) else ""
    for i, (ref, fr) in enumerate(values):
        for cand, fc in values[i + 1:]:
            rel = (fc - fr) / fr if fr else 0.0
            better = None if abs(rel) < cfg.fertility_tolerance else (cand if fc < fr else ref)
            ev.findings.append(Finding(
                instrument=label, tier=STATISTIC, reference=ref, candidate=cand, better=better,
                difference=fc - fr, low=None, high=None, unit="pieces/word", source=source,
                detail=(f"{cand} {fc:.3f} vs {ref} {fr:.3f} pieces/word ({100 * rel:+.1f} %; no interval, under "
                        f"{100 * cfg.fertility_tolerance:g} % not told apart){note}")))


# --- the decision ---------------------------------------------------------------------------------
def decide(paths: Iterable[str | Path] = (), config: DecideConfig | None = None, *,
           comparison: dict | None = None, comparison_source: str = "report") -> Decision:
    """Read the evidence under ``paths`` (and ``comparison``: a Comparison's ``as_dict()``, the
    report's own corpus) and return the :class:`Decision`."""
    cfg = config or DecideConfig()
    ev = read_evidence(paths, cfg)
    if comparison is not None:
        add_comparison(ev, comparison, comparison_source, cfg)
    if not ev.sources:  # pragma: no cover - evidence_files refuses an empty list first
        raise ConfigError("give at least one evidence folder or file")
    return conclude(ev, cfg)


def decide_with(ev: _Evidence, comparison: dict, source: str, config: DecideConfig | None = None) -> Decision:
    """The decision over evidence already read (:func:`read_evidence`) plus a Comparison's
    ``as_dict()`` (the report's corpus, named ``source``)."""
    cfg = config or DecideConfig()
    ev = _Evidence(list(ev.findings), list(ev.discarded), list(ev.context), list(ev.arms), list(ev.ablations),
                   list(ev.sources))
    add_comparison(ev, comparison, source, cfg)
    return conclude(ev, cfg)


def conclude(ev: _Evidence, cfg: DecideConfig) -> Decision:
    kept = [f for f in ev.findings if f.kept]
    tier = next((t for t in (DOWNSTREAM, MODEL, STATISTIC) if any(f.tier == t and f.better for f in kept)), None)
    scores = {a: 0 for a in ev.arms}
    if tier is not None:
        for f in kept:
            if f.tier == tier and f.better:
                scores[f.better] += 1
                scores[f.worse] -= 1
    pick, certainty = None, "none"
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if tier is not None and ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
        pick = ranked[0][0]
        certainty = CERTAINTY[tier]
        beaten = [f for f in kept if f.tier == tier and f.worse == pick]
        if beaten:
            certainty = "weak" if tier == STATISTIC else "indicative"
    disagreements = _disagreements(ev.findings)
    settle = tuple(_settle(ev, cfg)) if certainty != "firm" else ()
    summary = _summary(ev, tier, pick, certainty, scores, kept, disagreements)
    return Decision(arms=tuple(ev.arms), pick=pick, certainty=certainty, tier=tier, scores=scores, summary=summary,
                    findings=tuple(ev.findings), discarded=tuple(ev.discarded), disagreements=tuple(disagreements),
                    context=tuple(ev.context), settle=settle, sources=tuple(ev.sources))


def _summary(ev: _Evidence, tier: int | None, pick: str | None, certainty: str, scores: dict,
             kept: list[Finding], disagreements: list[str]) -> str:
    counts = f"{len(kept)} of {len(ev.findings)} comparisons kept" + (
        ", the others discarded with their reasons below" if len(kept) < len(ev.findings) else "")
    if tier is None:
        return f"No pick: no kept evidence tells the arms ({', '.join(ev.arms)}) apart ({counts})." + _void_sources(ev)
    deciding = [f for f in kept if f.tier == tier and f.better]
    order = ", ".join(f"{a} {s:+d}" for a, s in sorted(scores.items(), key=lambda kv: (-kv[1], ev.arms.index(kv[0]))))
    if pick is None:
        top = max(scores.values())
        tied = [a for a, s in scores.items() if s == top]
        pairs = {frozenset((f.reference, f.candidate)) for f in kept if f.tier == tier}
        unmet = [f"{a} and {b}" for i, a in enumerate(tied) for b in tied[i + 1:] if frozenset((a, b)) not in pairs]
        hint = (f" {'; '.join(unmet)} were never compared with each other (each only against the first arm): "
                "rerun with `--pairs all`." if unmet else "")
        return (f"No pick: on {TIER_LABELS[tier]}, the strongest evidence kept, {' and '.join(tied)} tie "
                f"(wins minus losses: {order}; {counts}).{hint}" + _void_sources(ev))
    why = {DOWNSTREAM: "downstream tasks with intervals over enough seeds decide it",
           MODEL: "no downstream task decides it; the models' held-out scores do, which predict but are not "
                  "the downstream tasks",
           STATISTIC: "no model-based evidence survives; only tokenizer statistics, without intervals, decide it"}[tier]
    out = (f"Pick: {pick} ({certainty}): {why} (wins minus losses over {len(deciding)} decisive comparison"
           f"{'s' if len(deciding) != 1 else ''}: {order}; {counts}).")
    if disagreements:
        out += f" The instruments disagree on {len(disagreements)} pair{'s' if len(disagreements) != 1 else ''}."
    return out + _void_sources(ev)


def _void_sources(ev: _Evidence) -> str:
    """' The ablation in X is void: ...' for each ablation or probe whose every comparison is discarded."""
    out = ""
    for source in dict.fromkeys(f.source for f in ev.findings if f.tier != STATISTIC):
        mine = [f for f in ev.findings if f.source == source and f.tier != STATISTIC]
        if mine and not any(f.kept for f in mine):
            kind = "ablation" if any(a == source for a, _ in ev.ablations) else "probe"
            why = "; ".join(dict.fromkeys(r for f in mine for r in f.void.split("; ")))
            out += (f" The {kind} in {source} is void: all {len(mine)} of its comparison{'s' if len(mine) != 1 else ''} "
                    f"are discarded ({why}).")
    return out


def _disagreements(findings: Sequence[Finding]) -> list[str]:
    """One sentence per pair of arms that two instruments order oppositely (kept or discarded)."""
    by_pair: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        if f.better:
            by_pair.setdefault(tuple(sorted((f.reference, f.candidate))), []).append(f)
    out = []
    for (a, b), fs in by_pair.items():
        winners = {f.better for f in fs}
        if len(winners) < 2:
            continue
        sides = []
        for w in (a, b):
            mine = [f for f in fs if f.better == w]
            said = "; ".join(f"{f.instrument} ({f.numbers()}{', discarded' if not f.kept else ''})" for f in mine)
            sides.append(f"{w} is better by {said}")
        out.append(f"{a} against {b}: " + ", while ".join(sides) + ".")
    return out


# --- what would settle it ---------------------------------------------------------------------------
def _cpu_rate(ev: _Evidence, cfg: DecideConfig) -> tuple[float, str]:
    """Pretraining token positions per CPU-second: measured by the user's ablation (its costs.json)
    when there is one, else biotok's measured table (biotok/data/pretrain_throughput.json)."""
    for source, d in ev.ablations:
        costs = Path(source).parent / "costs.json"
        try:
            c = json.loads(costs.read_text(encoding="utf-8")) if costs.is_file() else None
        except (OSError, ValueError):
            c = None
        if not c or c.get("format") != "biotok-costs/1":
            continue
        pseeds = len(d["recipe"].get("pretrain_seeds") or [0])
        cpu = sum(float(v.get("pretrain", 0.0)) for v in c.get("by_arm", {}).values())
        positions = sum(int(a.get("tokens_seen", 0)) * pseeds for a in d["arms"] if a.get("init", "scratch") != "general")
        if cpu >= cfg.min_measured_cpu_s and positions > 0:  # a few toy steps measure start-up, not a rate
            size = d["arms"][0].get("size", "?")
            return positions / cpu, (f"{positions / cpu:,.0f} positions per CPU-second, measured by the pretraining "
                                     f"jobs of {costs} (BERT-{size})")
    from biotok.cost import default_throughput  # lazy: only when no ablation of the user's measured its rate

    t = default_throughput()
    if t is None:
        return cfg.cpu_positions_per_s, f"{cfg.cpu_positions_per_s:,.0f} positions per CPU-second (assumed)"
    return t.tokens_per_second, f"{t.tokens_per_second:,.0f} positions per CPU-second, {t.source}"


def _settle(ev: _Evidence, cfg: DecideConfig) -> list[Settle]:
    arms = len(ev.arms) or 1
    seeds = cfg.seeds_to_settle
    rate, basis = _cpu_rate(ev, cfg)
    recipe = ev.ablations[0][1]["recipe"] if ev.ablations else {}
    batch, seq = cfg.plateau_batch
    steps = math.ceil(cfg.plateau_positions / (batch * seq))
    seed_list = " ".join(map(str, range(seeds)))
    base = recipe.get("base")
    out = []
    scratch_positions = arms * seeds * cfg.plateau_positions
    out.append(Settle(
        what=(f"From scratch on this CPU at the measured plateau threshold: {arms} arms × {seeds} pretraining seeds × "
              f"{cfg.plateau_positions:,} token positions ({steps:,} steps of {batch} × {seq}), the budget at which "
              f"BERT-tiny left the unigram plateau ({cfg.plateau_source}), pretraining alone"),
        command=f"biotok-train ablate --tokenizers TOK... --corpus CORPUS --task PATH --budget {steps} "
                f"--batch-size {batch} --seq-len {seq} --pretrain-seeds {seed_list} --seeds 0 1 --pairs all "
                "--out ablation/",
        hours=scratch_positions / rate / 3600, unit="CPU-hours", basis=basis))
    if base:
        cbatch, cseq = int(recipe.get("batch_size", 8)), int(recipe.get("seq_len", 128))
        cont, where = int(recipe.get("budget", 0)) * cbatch * cseq, "your ablation's budget"
    else:
        (cbatch, cseq), cont, where = cfg.continued_batch, cfg.continued_positions, "docs/results/transfer-cpu's budget"
    out.append(Settle(
        what=(f"Continued pretraining from your base on this CPU: {arms} arms × {seeds} seeds × {cont:,} token positions "
              f"({where}; the base must itself have left the plateau), pretraining alone, at BERT-tiny's rate (a base "
              "with k times its parameters costs about k times more)"),
        command=f"biotok-train ablate --tokenizers TOK... --corpus CORPUS --task PATH --base {base or 'BASE_MODEL/'} "
                f"--arms continual,transfer --budget {math.ceil(cont / (cbatch * cseq))} --batch-size {cbatch} "
                f"--seq-len {cseq} --pretrain-seeds {seed_list} --pairs all --out ablation-base/",
        hours=arms * seeds * cont / rate / 3600, unit="CPU-hours", basis=basis))
    gpu = arms * seeds * cfg.gpu_positions_per_arm / cfg.gpu_positions_per_s
    out.append(Settle(
        what=(f"The from-scratch grid on one GPU: BERT-small, {arms} arms × {seeds} pretraining seeds × "
              f"{cfg.gpu_positions_per_arm:,} token positions (the GPU recipe of docs/results/ablation-gpu-fr), "
              "pretraining alone"),
        command=f"biotok-train ablate --tokenizers TOK... --corpus CORPUS --task PATH --sizes small "
                f"--budget {math.ceil(cfg.gpu_positions_per_arm / (64 * 128))} --batch-size 64 --seq-len 128 "
                f"--pretrain-seeds {seed_list} --pairs all --engine ray --gpus-per-job 0.25 --out ablation-gpu/",
        hours=gpu / 3600, unit="GPU-hours",
        basis=f"{cfg.gpu_positions_per_s:,.0f} positions per second, {cfg.gpu_source}"))
    return out


def plateau_warning(size: str, positions_per_arm: int, *, objective: str = "mlm", from_base: bool = False,
                    device: str = "cpu", config: DecideConfig | None = None) -> str | None:
    """One line when a from-scratch masked LM of ``size`` on a CPU gets fewer token positions per
    arm than the measured plateau threshold (BERT-tiny: docs/results/plateau-fr), else None: its
    masked-LM numbers would then say nothing about the vocabularies. Only what was measured warns
    (size tiny, MLM, from scratch, on a CPU)."""
    cfg = config or DecideConfig()
    if size != "tiny" or objective != "mlm" or from_base or device != "cpu" or positions_per_arm >= cfg.plateau_positions:
        return None
    batch, seq = cfg.plateau_batch
    return (f"warning: {positions_per_arm:,} token positions per arm is below the {cfg.plateau_positions:,} at which "
            f"BERT-tiny left the unigram plateau on a CPU ({cfg.plateau_source}): its masked-LM and downstream "
            f"verdicts will likely say nothing about the vocabularies (--budget "
            f"{math.ceil(cfg.plateau_positions / (batch * seq))} at --batch-size {batch} --seq-len {seq} reaches it)")


# --- small helpers ---------------------------------------------------------------------------------
def _task_label(tasks: dict, task: str) -> str:
    t = tasks.get(task) or {}
    return f"{t.get('name', task)} {t['metric']}" if t.get("metric") else str(task)


def _num(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _f(x) -> str:
    return f"{x:.3f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def _hours(h: float) -> str:
    return f"{h:,.1f}" if h >= 1 else f"{h:.2f}"


__all__ = ["Decision", "Discarded", "Finding", "Settle", "decide", "decide_with", "evidence_files",
           "plateau_warning", "read_evidence"]
