"""The French biomedical tokenizer study: rebuilds docs/study.md and its figures in one command.

    python -m benchmarks.experiments.study [--leaflets-mb 120] [--retrain]
    python -m benchmarks.experiments.study --from-json docs/study/study.json   # only rewrite study.md

1. Training text: E3C French clinical cases (PAMJ, all but the last 300 documents), E3C drug
   leaflets (the first ``--leaflets-mb`` MB), QUAERO train (MEDLINE titles + EMEA), LabForSIMS
   doctor-patient dialogues, the French side of the WMT biomedical training abstracts
   (MEDLINE, SciELO, EDP; research use, read from ../shared, never redistributed).
2. Held-out text: QUAERO test (MEDLINE + EMEA) and the last 300 PAMJ clinical cases.
3. Trains the AliBERT paper's variants at 32,000 pieces (Unigram, Unigram_L, Unigram_N_N with
   SentencePiece, as AliBERT did; BPE and WordPiece with tokenizers), the HF tokenizers Unigram
   trainer and Unigram without punctuation pieces for comparison, and Unigram_L and BPE at
   40,000 (or the most the text supports), then compares them with the shared CamemBERTa,
   CamemBERTv2, BARThez, FlauBERT, BERT and SciBERT tokenizers.
4. Writes docs/study.md (tables + verdicts computed from the numbers), docs/study/study.json
   (with the inputs' hashes, library versions and git commit) and the figures of
   ``biotok report`` in docs/study/.

Caching is keyed on the inputs: the derived corpora live under a key made of the recipe, the
arguments and the sha256 of every source file; each tokenizer under a key made of the corpus
key, its full TrainConfig and the library versions. A changed argument rebuilds exactly what
it affects; ``--retrain`` retrains regardless.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tarfile
import time
from dataclasses import replace
from pathlib import Path

import regex

from benchmarks import corpora as C
from benchmarks._common import CACHE, DATA, REPO, git_commit, require_data

from biotok.config import NormalizeConfig, TrainConfig  # noqa: E402
from biotok.corpus import iter_lines  # noqa: E402
from biotok.errors import VocabSizeError  # noqa: E402
from biotok.formats import load  # noqa: E402
from biotok.io import open_text, sha256_file, versions  # noqa: E402
from biotok.output import atomic_directory  # noqa: E402
from biotok.report import build_report  # noqa: E402
from biotok.terminology import read_terms_file, segment_terms  # noqa: E402
from biotok.vocab import diff_vocab, duplicates  # noqa: E402

RECIPE = 2  # bump when build_corpora selects text differently: every cached corpus is then rebuilt
HELD_OUT_PAMJ = 300
REFERENCES = ["camemberta", "camembertv2", "barthez", "flaubert", "bert", "bert-cased", "scibert"]
TERMS = C.TERMS_FR
SOURCES = {name: path.relative_to(DATA).as_posix() for name, path in  # paths in the shared data, as study.json records them
           {"pamj": C.PAMJ, "leaflets": C.LEAFLETS, "quaero": C.QUAERO, "labforsims": C.LABFORSIMS,
            "wmt": C.WMT_BIOMED_TRAIN}.items()}
LOWER = NormalizeConfig(lowercase=True)
VARIANTS = {  # name: (algo, backend, vocab, normalize config, punctuation pieces)
    "Unigram": ("unigram", "sentencepiece", 32000, NormalizeConfig(), True),
    "Unigram_L": ("unigram", "sentencepiece", 32000, LOWER, True),
    "Unigram_N_N": ("unigram", "sentencepiece", 32000, NormalizeConfig.raw(), True),
    "Unigram_L-plain": ("unigram", "sentencepiece", 32000, LOWER, False),
    "Unigram_L-hf": ("unigram", "tokenizers", 32000, LOWER, True),
    "BPE": ("bpe", "tokenizers", 32000, LOWER, True),
    "WordPiece": ("wordpiece", "tokenizers", 32000, LOWER, True),
    "Unigram_L-40k": ("unigram", "sentencepiece", 40000, LOWER, True),
    "BPE-40k": ("bpe", "tokenizers", 40000, LOWER, True),
}


def cache_key(obj: object) -> str:
    """A short, stable hash of JSON-able inputs: equal inputs, equal key."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def variant_configs(scale: float = 1.0) -> dict[str, TrainConfig]:
    """The TrainConfig of each variant (``scale`` shrinks vocabularies for a smoke run)."""
    return {
        name: TrainConfig(algo=algo, backend=backend, vocab_size=int(vocab * scale), normalize=norm,
                          punct_pieces=punct)
        for name, (algo, backend, vocab, norm, punct) in VARIANTS.items()
    }


# --- corpora ----------------------------------------------------------------------------------
def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.splitlines() if p.strip()]


def _pamj_docs() -> list[str]:
    with open_text(DATA / SOURCES["pamj"], newline=None) as f:
        return [json.loads(l)["text"] for l in f]


def _tar_texts(source: str, keep) -> list[str]:
    """Paragraphs of the members of a tar archive for which ``keep(name)`` holds, in name order."""
    out = []
    with tarfile.open(DATA / SOURCES[source]) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.isfile() and keep(m.name):
                out.extend(_paragraphs(tar.extractfile(m).read().decode("utf-8")))
    return out


def _quaero(split: str) -> list[str]:
    return _tar_texts("quaero", lambda n: n.startswith(f"corpus/{split}/") and n.endswith(".txt"))


def _labforsims() -> list[str]:
    lines = _tar_texts("labforsims", lambda n: n.startswith("dialogues/"))
    return [parts[1] for l in lines if len(parts := l.split(maxsplit=1)) == 2]  # "d39000000 bonjour"


def _wmt_french() -> list[str]:
    """French side of the WMT biomedical training abstracts (MEDLINE, SciELO, EDP)."""
    return _tar_texts("wmt", lambda n: n.endswith(("medline_d1.fr", "scielo_d1.fr", "edp_d1.fr")))


def corpus_inputs(leaflets_mb: float) -> dict:
    """Everything the derived corpora depend on: recipe, arguments, source file hashes."""
    return {
        "recipe": RECIPE,
        "leaflets_mb": leaflets_mb,
        "held_out_pamj": HELD_OUT_PAMJ,
        "sources": {k: {"path": p, "sha256": sha256_file(DATA / p)} for k, p in SOURCES.items()},
    }


def build_corpora(work: Path, inputs: dict) -> dict[str, Path]:
    """train.txt and the two held-out texts, built once per input key under ``work/corpora``."""
    out = work / "corpora" / cache_key(inputs)
    names = ("train", "heldout_quaero", "heldout_e3c")
    if (out / "inputs.json").is_file():
        return {k: out / f"{k}.txt" for k in names}
    pamj = _pamj_docs()
    with atomic_directory(out, force=True) as tmp:
        with open(tmp / "train.txt", "w", encoding="utf-8") as f:
            for doc in pamj[:-HELD_OUT_PAMJ]:
                f.writelines(p + "\n" for p in _paragraphs(doc))
            for p in _quaero("train") + _labforsims() + _wmt_french():
                f.write(p + "\n")
            budget = int(inputs["leaflets_mb"] * 1e6)
            for line in iter_lines([DATA / SOURCES["leaflets"]]):
                f.write(line + "\n")
                budget -= len(line.encode("utf-8")) + 1
                if budget <= 0:
                    break
        (tmp / "heldout_quaero.txt").write_text("\n".join(_quaero("test")) + "\n", encoding="utf-8")
        (tmp / "heldout_e3c.txt").write_text(
            "\n".join(p for d in pamj[-HELD_OUT_PAMJ:] for p in _paragraphs(d)) + "\n", encoding="utf-8"
        )
        (tmp / "inputs.json").write_text(json.dumps(inputs, indent=2) + "\n", encoding="utf-8")
    return {k: out / f"{k}.txt" for k in names}


# --- tokenizers -------------------------------------------------------------------------------
def train_variants(
    work: Path, train: Path, corpus_key: str, configs: dict[str, TrainConfig], retrain: bool
) -> dict[str, Path]:
    """Train each variant once per (corpus, config, library versions); reuse it otherwise."""
    from biotok.train import train_tokenizer

    out = {}
    for name, cfg in configs.items():
        key = cache_key({"corpus": corpus_key, "config": cfg.to_dict(), "versions": versions()})
        d = work / "tokenizers" / f"{name}-{key}"
        if retrain or not (d / "biotok.json").is_file():
            start = time.perf_counter()
            try:
                train_tokenizer([train], cfg, d, force=True)
            except VocabSizeError as e:
                if not e.too_large:
                    raise
                # the text supports fewer pieces: take the largest, in thousands
                size = e.supported // 1000 * 1000
                print(f"{name}: {e}; training at {size}", flush=True)
                train_tokenizer([train], replace(cfg, vocab_size=size), d, force=True)
            print(f"trained {name} in {time.perf_counter() - start:.0f} s", flush=True)
        out[name] = d
    return out


_GLUED = regex.compile(r"\p{L}.*[()\[\]{},;:!?\"%]|[()\[\]{},;:!?\"%].*\p{L}|\p{L}\.$")


def glued_pieces(tok) -> list[str]:
    """Pieces that glue a word to punctuation ('jours.', '(patient'), most frequent first."""
    vocab = tok.get_vocab()
    return sorted((p for p in vocab if _GLUED.search(p.lstrip("▁"))), key=vocab.__getitem__)


# --- measurements -----------------------------------------------------------------------------
def measure(toks: dict, order: list[str], paths: dict[str, Path], fig: Path) -> dict:
    """Vocabulary statistics, fragmentation on the held-out texts (+ report figures), term table."""
    res: dict = {"training_text": {}, "heldout": {}, "vocab": {}}
    for k, p in paths.items():
        n_lines = sum(1 for _ in open(p, encoding="utf-8"))
        res["training_text" if k == "train" else "heldout"][k] = {
            "file": p.name, "lines": n_lines, "mb": round(p.stat().st_size / 1e6, 2)}
    for n in order:
        d = diff_vocab(toks[n], toks["camemberta"]) if n != "camemberta" else None
        glued = glued_pieces(toks[n])
        res["vocab"][n] = {
            "size": toks[n].vocab_size, "marker": toks[n].marker, "duplicates": duplicates(toks[n]),
            "shared_with_camemberta": None if d is None else d.shared,
            "jaccard_camemberta": None if d is None else d.jaccard,
            "glued_punctuation": len(glued), "glued_examples": glued[:6],
            "spaced_comma_piece": "▁," in toks[n].get_vocab(),
        }
    tok_list = [toks[n] for n in order]
    for key, label in (("heldout_quaero", "QUAERO test"), ("heldout_e3c", "E3C clinical cases (held out)")):
        lines = paths[key].read_text(encoding="utf-8").splitlines()
        # no report.html here: it would embed the reference tokenizers' vocabularies (and ~4 MB each)
        rep = build_report(tok_list, lines, fig / key, force=True, corpus_label=label, html=False)
        res["heldout"][key]["metrics"] = {
            r.name: {**{k: v for k, v in r.as_dict().items() if isinstance(v, (int, float))}, "relative_length": rel}
            for r, rel in zip(rep.comparison.results, rep.comparison.relative_length)
        }
    res["terms"] = segment_terms(tok_list, read_terms_file(TERMS)).as_dict()
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--leaflets-mb", type=float, default=120, help="MB of E3C drug leaflets in the training text")
    ap.add_argument("--retrain", action="store_true", help="retrain every variant even when its key is cached")
    ap.add_argument("--smoke", action="store_true",
                    help="1 MB of leaflets, vocabularies / 10, output under /tmp/biotok-study-smoke")
    ap.add_argument("--from-json", type=Path, default=None, metavar="STUDY_JSON",
                    help="only rewrite study.md (next to docs/study/) from an existing study.json")
    ap.add_argument("--docs", type=Path, default=REPO / "docs", help="where study.md and study/ go")
    args = ap.parse_args()
    if args.from_json is not None:
        res = json.loads(args.from_json.read_text(encoding="utf-8"))
        (args.docs / "study.md").write_text(write_markdown(res), encoding="utf-8")
        print(f"-> {args.docs / 'study.md'}")
        return
    docs, work, scale = args.docs, CACHE / "study", 1.0
    if args.smoke:
        args.leaflets_mb, scale = 1, 0.1
        docs = Path("/tmp/biotok-study-smoke")
        work = docs / "work"
    require_data()
    inputs = corpus_inputs(args.leaflets_mb)
    paths = build_corpora(work, inputs)
    variants = train_variants(work, paths["train"], cache_key(inputs), variant_configs(scale), args.retrain)
    toks = {n: load(p, name=n) for n, p in variants.items()}
    for alias in REFERENCES:
        toks[alias] = load(alias, tokenizers_dir=C.TOKENIZERS)
    order = ["camemberta"] + [n for n in toks if n != "camemberta"]  # relative length vs CamemBERTa
    fig = docs / "study"
    fig.mkdir(parents=True, exist_ok=True)
    res = {
        "leaflets_mb": args.leaflets_mb,
        "inputs": {**inputs, "corpus_key": cache_key(inputs),
                   "variants": {n: c.to_dict() for n, c in variant_configs(scale).items()},
                   "references": {a: toks[a].fingerprint for a in REFERENCES}},
        "versions": versions(),
        "commit": git_commit(),
        **measure(toks, order, paths, fig),
    }
    (fig / "study.json").write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (docs / "study.md").write_text(write_markdown(res), encoding="utf-8")
    print(f"-> {docs / 'study.md'}")


# --- markdown ---------------------------------------------------------------------------------
def _fmt(x: float, d: int = 3) -> str:
    return f"{x:.{d}f}"


def _change(rel: float) -> str:
    return f"{abs(1 - rel) * 100:.1f} % {'shorter' if rel < 1 else 'longer'}"


def _verdict(ok: bool) -> str:
    return "**supported**" if ok else "**not supported**"


def _order(res: dict) -> list[str]:
    return list(res["vocab"])


def _data_section(res: dict) -> list[str]:
    ver = res.get("versions") or {}
    L = ["## Data\n", "| text | lines | MB |\n|---|---:|---:|"]
    for k, d in {**res["training_text"], **res["heldout"]}.items():
        L.append(f"| {k} | {d['lines']:,} | {d['mb']} |")
    L.append(f"\nTraining: E3C PAMJ clinical cases (all but the last {HELD_OUT_PAMJ} documents), the first "
             f"{res['leaflets_mb']:g} MB of the E3C drug leaflets, QUAERO train, LabForSIMS dialogues and the "
             "French WMT biomedical abstracts (MEDLINE, SciELO, EDP). Held out: QUAERO test (MEDLINE titles "
             f"and EMEA leaflets) and the last {HELD_OUT_PAMJ} PAMJ clinical cases. The biotok variants follow "
             "the AliBERT paper's list: `Unigram*` are SentencePiece Unigram models (`--algo unigram`, its default "
             "backend), `Unigram_L-hf` the `tokenizers` Unigram trainer (`--algo unigram --backend tokenizers`), "
             "BPE and WordPiece the `tokenizers` trainers (their default backend), `-plain` without punctuation "
             "pieces (`--no-punct-pieces`); all are lowercased except `Unigram` (cased) and `Unigram_N_N` (no "
             "normalization at all). A size below the one asked is the most the training text supports.\n")
    versions = ", ".join(f"{k} {v}" for k, v in ver.items()) or "not recorded in study.json"
    commit = f"`{res['commit']}`" if res.get("commit") else "not recorded in study.json"
    L.append(f"Library versions: {versions}. Commit: {commit}.\n")
    return L


def _vocab_section(res: dict) -> list[str]:
    L = ["## Vocabularies\n",
         "| tokenizer | size | marker | same word with and without marker | shared with CamemBERTa | Jaccard |",
         "|---|---:|---|---:|---:|---:|"]
    for n, x in res["vocab"].items():
        sh = "" if x["shared_with_camemberta"] is None else f"{x['shared_with_camemberta']:,}"
        jc = "" if x["jaccard_camemberta"] is None else _fmt(x["jaccard_camemberta"])
        L.append(f"| {n} | {x['size']:,} | `{x['marker']}` | {x['duplicates']:,} | {sh} | {jc} |")
    return L


def _fragmentation_section(res: dict) -> list[str]:
    L = []
    for key, title in (("heldout_quaero", "QUAERO test"), ("heldout_e3c", "E3C clinical cases (held out)")):
        m = res["heldout"][key]["metrics"]
        L.append(f"\n## Fragmentation on {title}\n")
        L.append("Words are biotok's words (punctuation spaced, whitespace split), identical for every tokenizer.\n")
        L.append("| tokenizer | fertility | split words | pieces per split word | length vs CamemBERTa | UNK rate | chars/piece | vocab used | Rényi eff. |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n in _order(res):
            r = m[n]
            L.append(f"| {n} | {_fmt(r['fertility'])} | {_fmt(r['split_share'])} | {_fmt(r['pieces_per_split_word'])} | "
                     f"{_fmt(r['relative_length'])} | {_fmt(r['unk_rate'], 4)} | {_fmt(r['chars_per_piece'], 2)} | "
                     f"{_fmt(r['utilization'])} | {_fmt(r['renyi_efficiency'])} |")
        L.append(f"\n![fertility](study/{key}/fertility.png)\n![sequence length](study/{key}/sequence_length.png)\n")
    L.append("![vocabulary overlap](study/heldout_quaero/vocab_overlap.png)\n")
    L.append("![pieces per word](study/heldout_quaero/pieces_per_word.png)\n")
    return L


def _terms_section(res: dict) -> list[str]:
    t = res["terms"]
    names = t["tokenizers"]
    L = ["## French terms\n", "| term | category | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for r in t["terms"]:
        L.append(f"| {r['term']} | {r['category']} | " + " | ".join(r["segmentations"][n]["cell"] for n in names) + " |")
    L.append("\n| tokenizer | terms in one piece | mean pieces per term |\n|---|---:|---:|")
    for n in names:
        L.append(f"| {n} | {_fmt(t['one_piece_share'][n], 2)} | {_fmt(t['mean_pieces'][n], 2)} |")
    return L


def write_markdown(res: dict) -> str:
    """docs/study.md from the study's numbers alone (``res`` is what study.json holds)."""
    L = ["# Which vocabulary for French biomedical text? A study with biotok\n",
         "Reproduce everything here (tables, figures, verdicts) with `python -m benchmarks.experiments.study`",
         "(reference data in `../shared/data`; about 20 minutes on 2 cores). Numbers below are",
         "written by that script from its own measurements.\n"]
    L += _data_section(res) + _vocab_section(res) + _fragmentation_section(res) + _terms_section(res)
    L.append("\n## What the data say about the papers' claims\n")
    L += [f"{i}. {v}" for i, v in enumerate(verdicts(res), start=1)]
    return "\n".join(L) + "\n"


# --- verdicts: every sentence below is computed from the numbers in ``res`` ----------------------
def verdict_duplicates(res: dict) -> str:
    """Claim: punctuation spacing reduces forms present with and without the word-start marker."""
    v = res["vocab"]
    norm, raw = v["Unigram"], v["Unigram_N_N"]
    fewer = norm["duplicates"] < raw["duplicates"]
    glued = (f"Pieces joining letters and punctuation: {raw['glued_punctuation']:,} in Unigram_N_N, "
             f"{norm['glued_punctuation']:,} in Unigram.")
    return (f"*Normalization (punctuation spacing) reduces duplicates of a word with and without the word-start "
            f"marker*: {_verdict(fewer)} here. Unigram {norm['size']:,} normalized: {norm['duplicates']:,} forms "
            f"present with and without `▁`; not normalized (Unigram_N_N): {raw['duplicates']:,} "
            f"({'fewer' if fewer else 'no fewer'} with spacing). In raw text a word after a glued mark or an "
            f"elision (`(patient`, `l'hôpital`) has no `▁` before it, which is the copy spacing can remove. {glued}")


def verdict_lowercase(res: dict) -> str:
    """Claim: lowercasing lowers fertility (cased Unigram vs Unigram_L, both held-out texts)."""
    mq, me = res["heldout"]["heldout_quaero"]["metrics"], res["heldout"]["heldout_e3c"]["metrics"]
    fq, lq, fe, le = mq["Unigram"]["fertility"], mq["Unigram_L"]["fertility"], me["Unigram"]["fertility"], me["Unigram_L"]["fertility"]
    both, one = lq < fq and le < fe, lq < fq or le < fe
    word = _verdict(both) if both or not one else "**partly supported** (on one of the two texts)"
    return (f"*Lowercasing helps fertility*: {word}. Unigram (cased) vs Unigram_L: {_fmt(fq)} vs {_fmt(lq)} "
            f"pieces per word on QUAERO test, {_fmt(fe)} vs {_fmt(le)} on held-out E3C.")


def verdict_in_domain(res: dict, goal: tuple[float, float] = (0.20, 0.30)) -> str:
    """Claim: an in-domain vocabulary shortens inputs (PubMedBERT: by 20-30 %)."""
    mq, me = res["heldout"]["heldout_quaero"]["metrics"], res["heldout"]["heldout_e3c"]["metrics"]
    rel_q, rel_e = mq["Unigram_L"]["relative_length"], me["Unigram_L"]["relative_length"]
    vs_bert = mq["Unigram_L"]["relative_length"] / mq["bert"]["relative_length"]  # Unigram_L pieces / BERT pieces
    lo = goal[0]

    def reached(rel: float) -> str:
        return "reached" if 1 - rel >= lo else "not reached"

    return (f"*An in-domain vocabulary shortens inputs*: {_verdict(rel_q < 1 and rel_e < 1)}. biotok Unigram_L "
            f"needs {_fmt(rel_q, 2)}x the pieces of CamemBERTa on QUAERO test and {_fmt(rel_e, 2)}x on held-out E3C "
            f"({_change(rel_q)} and {_change(rel_e)}), and {_fmt(vs_bert, 2)}x the pieces of English BERT on QUAERO "
            f"test ({_change(vs_bert)}). The PubMedBERT paper's {goal[0]:.0%}-{goal[1]:.0%} shorter inputs are "
            f"{reached(vs_bert)} against English BERT and {reached(rel_q)} against CamemBERTa on QUAERO test.")


def verdict_shared(res: dict, paper: int = 10_000, window: tuple[int, int] = (7_000, 13_000)) -> str:
    """Claim (AliBERT): a French biomedical Unigram shares about 10,000 pieces with CamemBERT."""
    v = res["vocab"]
    shared = v["Unigram_L"]["shared_with_camemberta"]
    agree = window[0] <= shared <= window[1]
    return (f"*A French biomedical Unigram vocabulary shares only about {paper:,} pieces with CamemBERT's "
            f"32,005*: CamemBERT v1 is not in the reference data; against CamemBERTa ({v['camemberta']['size']:,} "
            f"entries, same lab, a SentencePiece Unigram too) our Unigram_L ({v['Unigram_L']['size']:,}) shares "
            f"{shared:,} marker-normalized forms (Jaccard {_fmt(v['Unigram_L']['jaccard_camemberta'])}): "
            f"{'consistent with' if agree else 'unlike'} the paper's figure "
            f"({'within' if agree else 'outside'} {window[0]:,}-{window[1]:,}).")


def verdict_punct_pieces(res: dict) -> str:
    """Finding: without '▁,'-style pieces, Unigram spends two pieces per punctuation mark."""
    mq, me = res["heldout"]["heldout_quaero"]["metrics"], res["heldout"]["heldout_e3c"]["metrics"]
    uni, plain, bpe = (mq[n]["mean_sequence_length"] for n in ("Unigram_L", "Unigram_L-plain", "BPE"))
    plain_e = me["Unigram_L-plain"]["mean_sequence_length"] / me["Unigram_L"]["mean_sequence_length"]
    helps = plain > uni and plain_e > 1
    has = {n: x.get("spaced_comma_piece") for n, x in res["vocab"].items() if n in ("Unigram_L-plain", "BPE")}
    learned = "" if None in has.values() else (
        f" `▁,` is {'in' if has['Unigram_L-plain'] else 'not in'} the plain Unigram_L vocabulary and "
        f"{'in' if has['BPE'] else 'not in'} BPE's.")
    return (f"*Punctuation pieces (`▁,`, `▁.`) shorten Unigram inputs on spaced text* (a finding, not a paper "
            f"claim): {_verdict(helps)}. biotok's `--punct-pieces` (default) adds them; the Unigram trainers only "
            f"seed pieces from substrings repeated across words, so a standalone mark may cost `▁` + mark.{learned} "
            f"Mean pieces per QUAERO line: Unigram_L {_fmt(uni, 1)}, without punctuation pieces (Unigram_L-plain) "
            f"{_fmt(plain, 1)} ({_change(plain / uni)}), BPE {_fmt(bpe, 1)}; on held-out E3C the plain model's "
            f"inputs are {_change(plain_e)}.")


def verdict_trainers(res: dict, default_backend: str | None = None) -> str:
    """Finding: the two Unigram trainers (tokenizers vs SentencePiece) differ; which one is better here."""
    default_backend = default_backend or TrainConfig(algo="unigram").backend
    mq, me = res["heldout"]["heldout_quaero"]["metrics"], res["heldout"]["heldout_e3c"]["metrics"]
    hf_q, hf_e, sp_q, sp_e = mq["Unigram_L-hf"], me["Unigram_L-hf"], mq["Unigram_L"], me["Unigram_L"]
    spm_better = sp_q["fertility"] < hf_q["fertility"] and sp_e["fertility"] < hf_e["fertility"]
    hf_better = hf_q["fertility"] < sp_q["fertility"] and hf_e["fertility"] < sp_e["fertility"]
    best = "sentencepiece" if spm_better else "tokenizers" if hf_better else None
    if best is None:
        tail = "Neither trainer gives lower fertility on both texts."
    else:
        tail = (f"The lower fertility on both texts comes from `{best}`; biotok's default Unigram backend, "
                f"`{default_backend}`, {'is' if best == default_backend else 'is not'} that trainer.")
    return (f"*The two Unigram trainers differ* (a finding): with the same text, normalization and size, the "
            f"`tokenizers` trainer (Unigram_L-hf) gives {_fmt(hf_q['fertility'])} pieces per word on QUAERO test and "
            f"{_fmt(hf_e['fertility'])} on E3C, SentencePiece (Unigram_L) {_fmt(sp_q['fertility'])} and "
            f"{_fmt(sp_e['fertility'])}; inputs are {_change(hf_q['mean_sequence_length'] / sp_q['mean_sequence_length'])} "
            f"with the `tokenizers` trainer on QUAERO. {tail}")


def verdict_spacing_length(res: dict) -> str:
    """Finding: what punctuation spacing costs in sequence length (Unigram_N_N vs cased Unigram)."""
    mq, me = res["heldout"]["heldout_quaero"]["metrics"], res["heldout"]["heldout_e3c"]["metrics"]
    n_q = mq["Unigram_N_N"]["mean_sequence_length"] / mq["Unigram"]["mean_sequence_length"]
    n_e = me["Unigram_N_N"]["mean_sequence_length"] / me["Unigram"]["mean_sequence_length"]
    if n_q < 1 and n_e < 1:
        word = "spacing makes inputs longer on both texts"
    elif n_q > 1 and n_e > 1:
        word = "spacing makes inputs shorter on both texts"
    else:
        word = "spacing changes length in opposite directions on the two texts"
    return (f"*What spacing costs in length* (a finding): without normalization (Unigram_N_N vs the cased Unigram, "
            f"both SentencePiece) inputs are {_change(n_q)} on QUAERO test and {_change(n_e)} on E3C: {word} (a "
            f"glued mark can share a piece with its word, a spaced one is a piece of its own, while glued forms "
            f"take vocabulary entries from whole words). The fertility of Unigram_N_N is not comparable with the "
            f"others: its pieces cross biotok's word boundaries, so some biotok words receive no piece.")


VERDICTS = (verdict_duplicates, verdict_lowercase, verdict_in_domain, verdict_shared,
            verdict_punct_pieces, verdict_trainers, verdict_spacing_length)


def verdicts(res: dict) -> list[str]:
    """The numbered claims of docs/study.md, each computed from ``res``."""
    return [v(res) for v in VERDICTS]


if __name__ == "__main__":
    main()
