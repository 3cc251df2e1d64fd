"""A published causal-LM probe as a recipe (benchmarks/experiments/probe_fr.py is one): its presets (the
full run and ``--quick``), its split of the text and its arms are configuration; :func:`main` gives it
one command line that runs ``biotok-train probe`` in each mode (raw, fair), copies each mode's files
under the page's folder and writes README.md from their probe.json alone (``--publish``: only that),
naming the command that gives them with every default left out.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from benchmarks import recipe as R
from benchmarks._common import CACHE, REPO, require_data
from biotok.errors import BiotokError
from biotok_train.config import ProbeConfig
from biotok_train.probe.report import publish, published_readme, read_published, setup_bullets

MODES = ("raw", "fair")


@dataclass(frozen=True)
class ProbeRecipe:
    """``full`` and ``quick``: presets with ``steps``, ``seeds`` and ``shape`` (ProbeConfig's model and
    score options), and what the recipe's own callables read; ``split(work, quick)``: the training and
    held-out documents; ``arms(work, train, preset)``: the tokenizers compared, the reference first;
    ``text``: what the documents are, in words; ``vocabularies(preset)``: what the arms are."""

    name: str
    doc: str
    title: str
    published: Path
    full: dict
    quick: dict
    split: Callable[[Path, bool], tuple[Path, Path]]
    arms: Callable[[Path, Path, dict], list[str]]
    text: str
    vocabularies: Callable[[dict], str]
    model: dict = field(default_factory=lambda: dict(batch_size=8, heads=2, layers=2))

    def command(self, results: dict[str, dict], quick: bool) -> str:
        """The command line that gives ``results`` (each mode's probe.json), defaults left out."""
        main = results.get("fair", results.get("raw"))["setup"]
        raw, base = results["raw"]["setup"]["seeds"] if "raw" in results else main["seeds"], self.preset(quick)
        return R.command_for(self.name, {"--quick": quick, "--steps": main["steps"], "--seeds": tuple(main["seeds"]),
                                         "--raw-seeds": tuple(raw), "--modes": tuple(results)},
                             {"--steps": base["steps"], "--seeds": base["seeds"], "--raw-seeds": tuple(main["seeds"]),
                              "--modes": MODES})

    def readme(self, results: dict[str, dict], timings: dict[str, dict], quick: bool = False) -> str:
        """README.md from each mode's probe.json and timings.json: every number comes from them."""
        setup = setup_bullets(results, text=self.text, vocabularies=self.vocabularies(self.preset(quick)))
        return published_readme(results, timings, title=self.title, command=self.command(results, quick), setup=setup)

    def preset(self, quick: bool) -> dict:
        """The run's preset: ``quick``'s or the full run's."""
        return self.quick if quick else self.full


def run(recipe: ProbeRecipe, a: argparse.Namespace) -> None:
    """The probe of each mode of ``a.modes`` (or, --publish, only the README), then its page."""
    if a.publish:
        if not (published := read_published(recipe.published))[0]:
            raise BiotokError(f"no raw/ nor fair/ probe.json in {recipe.published}: run {R.command(recipe.name)} first")
        return print(f"{recipe.name}: {publish({}, recipe.published, recipe.readme(*published))}", file=sys.stderr)
    require_data()
    from biotok_train.probe import run_probe  # lazy: torch only when the probe runs

    os.chdir(REPO)  # the published commands name paths relative to the checkout
    base, work = recipe.preset(a.quick), Path(os.path.relpath(CACHE, REPO)) / f"{recipe.name}{'_quick' * a.quick}"
    train, held = recipe.split(work, a.quick)
    arms, runs = recipe.arms(work, train, base), {mode: work / mode for mode in a.modes}
    for mode, out in runs.items():
        seeds = tuple(a.raw_seeds if mode == "raw" and a.raw_seeds else a.seeds or base["seeds"])
        run_probe(ProbeConfig(tokenizers=tuple(arms), corpus=(str(train),), heldout=(str(held),),
                              steps=a.steps or base["steps"], seeds=seeds, fair=mode == "fair", **recipe.model,
                              **base["shape"]), out)
    text = recipe.readme(*read_published(work, a.modes), quick=a.quick)
    print(f"{recipe.name}: {publish({} if a.quick else runs, work if a.quick else recipe.published, text)}",
          file=sys.stderr)


def options(recipe: ProbeRecipe, ap: argparse.ArgumentParser) -> None:
    """Every probe recipe's options, their defaults the presets'."""
    full, quick = recipe.full, recipe.quick
    ap.add_argument("--quick", action="store_true", help="toy sizes, results kept in benchmarks/.data only")
    ap.add_argument("--publish", action="store_true", help="only rewrite README.md from the published probe.json files")
    ap.add_argument("--steps", type=int, default=None,
                    help=f"optimizer steps per arm [{full['steps']}; quick {quick['steps']}]")
    ap.add_argument("--seeds", type=int, nargs="+", default=None,
                    help=f"[{' '.join(map(str, full['seeds']))}; quick {' '.join(map(str, quick['seeds']))}]")
    ap.add_argument("--raw-seeds", type=int, nargs="+", default=None,
                    help="seeds of the raw mode when they differ from --seeds (its runs are the like-for-like "
                         "mode's context, the fair mode carries the verdict)")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))


def main(recipe: ProbeRecipe, argv: Sequence[str] | None = None) -> int:
    """The recipe's command line (see the module): one error line and exit 2 for a bad input."""
    return R.command_line(recipe.name, recipe.doc, lambda ap: options(recipe, ap), lambda a: run(recipe, a), argv)


__all__ = ["MODES", "ProbeRecipe", "main", "options", "run"]
