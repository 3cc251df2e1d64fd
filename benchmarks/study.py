"""The French biomedical tokenizer study: rebuilds docs/study.md and its figures in one command.

    python benchmarks/study.py [--leaflets-mb 40] [--retrain]

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
   and the figures of ``biotok report`` in docs/study/.
"""

from __future__ import annotations

import argparse
import json
import re

import regex
import lzma
import sys
import tarfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, DATA, REPO, require_data  # noqa: E402

from biotok.config import NormalizeConfig, TrainConfig  # noqa: E402
from biotok.errors import ConfigError  # noqa: E402
from biotok.corpus import iter_lines  # noqa: E402
from biotok.metrics import read_terms, segment_terms  # noqa: E402
from biotok.report import build_report  # noqa: E402
from biotok.tokenizer import load  # noqa: E402
from biotok.train import train_tokenizer  # noqa: E402
from biotok.vocab import diff_vocab, duplicates  # noqa: E402

DOCS = REPO / "docs"
FIG = DOCS / "study"
WORK = CACHE / "study"
HELD_OUT_PAMJ = 300
REFERENCES = ["camemberta", "camembertv2", "barthez", "flaubert", "bert", "bert-cased", "scibert"]
LOWER = NormalizeConfig(lowercase=True)
VARIANTS = {  # name: (algo, vocab, normalize config, punctuation pieces)
    "Unigram": ("spm-unigram", 32000, NormalizeConfig(), True),
    "Unigram_L": ("spm-unigram", 32000, LOWER, True),
    "Unigram_N_N": ("spm-unigram", 32000, NormalizeConfig.raw(), True),
    "Unigram_L-plain": ("spm-unigram", 32000, LOWER, False),
    "Unigram_L-hf": ("unigram", 32000, LOWER, True),
    "BPE": ("bpe", 32000, LOWER, True),
    "WordPiece": ("wordpiece", 32000, LOWER, True),
    "Unigram_L-40k": ("spm-unigram", 40000, LOWER, True),
    "BPE-40k": ("bpe", 40000, LOWER, True),
}


def _pamj_docs() -> list[str]:
    with lzma.open(DATA / "corpora/e3c-fr/layer3_fr_pamj_ccby.jsonl.xz", "rt", encoding="utf-8") as f:
        return [json.loads(l)["text"] for l in f]


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.splitlines() if p.strip()]


def _quaero(split: str) -> list[str]:
    out = []
    with tarfile.open(DATA / "corpora/quaero-frenchmed/QUAERO_FrenchMed_CLEF2017_brat.tar.xz") as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.isfile() and m.name.startswith(f"corpus/{split}/") and m.name.endswith(".txt"):
                out.extend(_paragraphs(tar.extractfile(m).read().decode("utf-8")))
    return out


def _labforsims() -> list[str]:
    out = []
    with tarfile.open(DATA / "corpora/labforsims2-fr-dialogues/labforsims2-corpus.tar.xz") as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.isfile() and m.name.startswith("dialogues/"):
                for line in tar.extractfile(m).read().decode("utf-8").splitlines():
                    parts = line.strip().split(maxsplit=1)  # "d39000000 bonjour"
                    if len(parts) == 2:
                        out.append(parts[1])
    return out


def _wmt_french() -> list[str]:
    """French side of the WMT biomedical training abstracts (MEDLINE, SciELO, EDP)."""
    out = []
    with tarfile.open(DATA / "corpora/wmt-biomed-fr-en/wmt_biomed_train_medline_scielo_edp_fr-en.tar.xz") as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.isfile() and m.name.endswith(("medline_d1.fr", "scielo_d1.fr", "edp_d1.fr")):
                out.extend(_paragraphs(tar.extractfile(m).read().decode("utf-8")))
    return out


def build_corpora(leaflets_mb: float) -> dict[str, Path]:
    WORK.mkdir(parents=True, exist_ok=True)
    paths = {k: WORK / f"{k}.txt" for k in ("train", "heldout_quaero", "heldout_e3c")}
    if all(p.is_file() for p in paths.values()):
        return paths
    pamj = _pamj_docs()
    with open(paths["train"], "w", encoding="utf-8") as f:
        for doc in pamj[:-HELD_OUT_PAMJ]:
            f.writelines(p + "\n" for p in _paragraphs(doc))
        for p in _quaero("train") + _labforsims() + _wmt_french():
            f.write(p + "\n")
        budget = int(leaflets_mb * 1e6)
        for line in iter_lines([DATA / "corpora/e3c-fr/layer3_fr_ministere_ccbync.jsonl.xz"]):
            f.write(line + "\n")
            budget -= len(line.encode("utf-8")) + 1
            if budget <= 0:
                break
    paths["heldout_quaero"].write_text("\n".join(_quaero("test")) + "\n", encoding="utf-8")
    paths["heldout_e3c"].write_text(
        "\n".join(p for d in pamj[-HELD_OUT_PAMJ:] for p in _paragraphs(d)) + "\n", encoding="utf-8"
    )
    return paths


def train_variants(train: Path, retrain: bool) -> dict[str, Path]:
    out = {}
    for name, (algo, vocab, norm, punct) in VARIANTS.items():
        d = WORK / "tokenizers" / name
        if retrain or not (d / "tokenizer.json").is_file():
            start = time.perf_counter()
            cfg = TrainConfig(algo=algo, vocab_size=vocab, normalize=norm, punct_pieces=punct)
            try:
                train_tokenizer([train], cfg, d, force=True)
            except ConfigError as e:  # the text supports fewer pieces: take the largest, in thousands
                supported = int(re.search(r"supports only (\d+)", str(e)).group(1))
                print(f"{name}: {e}; training at {supported // 1000 * 1000}", flush=True)
                cfg = replace(cfg, vocab_size=supported // 1000 * 1000)
                train_tokenizer([train], cfg, d, force=True)
            print(f"trained {name} in {time.perf_counter() - start:.0f} s", flush=True)
        out[name] = d
    return out


_GLUED = regex.compile(r"\p{L}.*[()\[\]{},;:!?\"%]|[()\[\]{},;:!?\"%].*\p{L}|\p{L}\.$")


def glued_pieces(tok) -> list[str]:
    """Pieces that glue a word to punctuation ('jours.', '(patient'), most frequent first."""
    vocab = tok.get_vocab()
    return sorted((p for p in vocab if _GLUED.search(p.lstrip("▁"))), key=vocab.__getitem__)


def _fmt(x: float, d: int = 3) -> str:
    return f"{x:.{d}f}"


def _change(rel: float) -> str:
    return f"{abs(1 - rel) * 100:.1f} % {'shorter' if rel < 1 else 'longer'}"


def _verdict(ok: bool) -> str:
    return "**supported**" if ok else "**not supported**"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--leaflets-mb", type=float, default=120)
    ap.add_argument("--retrain", action="store_true")
    ap.add_argument("--smoke", action="store_true",
                    help="1 MB of leaflets, vocabularies / 10, output under /tmp/biotok-study-smoke")
    args = ap.parse_args()
    global DOCS, FIG, WORK
    if args.smoke:
        args.leaflets_mb = 1
        DOCS = Path("/tmp/biotok-study-smoke")
        FIG, WORK = DOCS / "study", DOCS / "work"
        for k, (algo, vocab, norm, punct) in list(VARIANTS.items()):
            VARIANTS[k] = (algo, vocab // 10, norm, punct)
    require_data()
    tokdir = DATA / "tokenizers"
    paths = build_corpora(args.leaflets_mb)
    variants = train_variants(paths["train"], args.retrain)
    toks = {n: load(p, name=n) for n, p in variants.items()}
    for alias in REFERENCES:
        toks[alias] = load(alias, tokenizers_dir=tokdir)
    order = ["camemberta"] + [n for n in toks if n != "camemberta"]  # relative length vs CamemBERTa
    tok_list = [toks[n] for n in order]

    FIG.mkdir(parents=True, exist_ok=True)
    results: dict = {"leaflets_mb": args.leaflets_mb, "training_text": {}, "heldout": {}, "vocab": {}, "terms": {}}
    for k, p in paths.items():
        n_lines = sum(1 for _ in open(p, encoding="utf-8"))
        results["training_text" if k == "train" else "heldout"][k] = {"file": p.name, "lines": n_lines, "mb": round(p.stat().st_size / 1e6, 2)}

    # vocabularies: size, duplicates, overlap with CamemBERTa
    for n in order:
        d = diff_vocab(toks[n], toks["camemberta"]) if n != "camemberta" else None
        results["vocab"][n] = {
            "size": toks[n].vocab_size,
            "marker": toks[n].marker,
            "duplicates": duplicates(toks[n]),
            "shared_with_camemberta": None if d is None else d.shared,
            "jaccard_camemberta": None if d is None else d.jaccard,
            "glued_punctuation": len(glued_pieces(toks[n])),
            "glued_examples": glued_pieces(toks[n])[:6],
        }
    # fragmentation on held-out text, with the biotok report figures
    for key, label in (("heldout_quaero", "QUAERO test"), ("heldout_e3c", "E3C clinical cases (held out)")):
        lines = paths[key].read_text(encoding="utf-8").splitlines()
        rep = build_report(tok_list, lines, FIG / key, force=True, corpus_label=label)
        results["heldout"][key]["metrics"] = {
            r.name: {**{k: v for k, v in r.as_dict().items() if isinstance(v, (int, float))}, "relative_length": rel}
            for r, rel in zip(rep.comparison.results, rep.comparison.relative_length)
        }
    # French term table
    terms = read_terms((REPO / "corpora/terms/fr_biomedical.txt").read_text(encoding="utf-8").splitlines())
    table = segment_terms(tok_list, terms)
    results["terms"] = table.as_dict()
    (FIG / "study.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    write_markdown(results, table, order)
    print(f"-> {DOCS / 'study.md'}")


def write_markdown(res: dict, table, order: list[str]) -> None:
    v = res["vocab"]
    mq = res["heldout"]["heldout_quaero"]["metrics"]
    me = res["heldout"]["heldout_e3c"]["metrics"]
    L = []
    L.append("# Which vocabulary for French biomedical text? A study with biotok\n")
    L.append("Reproduce everything here (tables, figures, verdicts) with `python benchmarks/study.py`")
    L.append("(reference data in `../shared/data`; about 20 minutes on 2 cores). Numbers below are")
    L.append("written by that script from its own measurements.\n")
    L.append("## Data\n")
    L.append("| text | lines | MB |\n|---|---:|---:|")
    for k, d in {**res["training_text"], **{k: x for k, x in res["heldout"].items()}}.items():
        L.append(f"| {k} | {d['lines']:,} | {d['mb']} |")
    L.append(f"\nTraining: E3C PAMJ clinical cases (all but the last 300 documents), the first {res['leaflets_mb']:g} MB of the E3C")
    L.append("drug leaflets, QUAERO train, LabForSIMS dialogues and the French WMT biomedical abstracts (MEDLINE,")
    L.append("SciELO, EDP). Held out: QUAERO test (MEDLINE titles and")
    L.append("EMEA leaflets) and the last 300 PAMJ clinical cases. The biotok variants follow the AliBERT")
    L.append("paper's list: `Unigram*` are SentencePiece Unigram models (`--algo spm-unigram`), `Unigram_L-hf`")
    L.append("the `tokenizers` Unigram trainer (`--algo unigram`), `-plain` without punctuation pieces")
    L.append("(`--no-punct-pieces`); all are lowercased except `Unigram` (cased) and `Unigram_N_N` (no")
    L.append("normalization at all). A size below the one asked is the most the training text supports.\n")
    L.append("## Vocabularies\n")
    L.append("| tokenizer | size | marker | same word with and without marker | shared with CamemBERTa | Jaccard |")
    L.append("|---|---:|---|---:|---:|---:|")
    for n in order:
        x = v[n]
        sh = "" if x["shared_with_camemberta"] is None else f"{x['shared_with_camemberta']:,}"
        jc = "" if x["jaccard_camemberta"] is None else _fmt(x["jaccard_camemberta"])
        L.append(f"| {n} | {x['size']:,} | `{x['marker']}` | {x['duplicates']:,} | {sh} | {jc} |")
    for key, title, m in (("heldout_quaero", "QUAERO test", mq), ("heldout_e3c", "E3C clinical cases (held out)", me)):
        L.append(f"\n## Fragmentation on {title}\n")
        L.append("Words are biotok's words (punctuation spaced, whitespace split), identical for every tokenizer.\n")
        L.append("| tokenizer | fertility | split words | pieces per split word | length vs CamemBERTa | UNK rate | chars/piece | vocab used | Rényi eff. |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n in order:
            r = m[n]
            L.append(f"| {n} | {_fmt(r['fertility'])} | {_fmt(r['split_share'])} | {_fmt(r['pieces_per_split_word'])} | "
                     f"{_fmt(r['relative_length'])} | {_fmt(r['unk_rate'], 4)} | {_fmt(r['chars_per_piece'], 2)} | "
                     f"{_fmt(r['utilization'])} | {_fmt(r['renyi_efficiency'])} |")
        L.append(f"\n![fertility](study/{key}/fertility.png)\n![sequence length](study/{key}/sequence_length.png)\n")
    L.append("![vocabulary overlap](study/heldout_quaero/vocab_overlap.png)\n")
    L.append("![pieces per word](study/heldout_quaero/pieces_per_word.png)\n")
    L.append("## French terms\n")
    L.append("| term | category | " + " | ".join(table.names) + " |")
    L.append("|---|---|" + "---|" * len(table.names))
    for r in table.rows:
        L.append(f"| {r.term} | {r.category} | " + " | ".join(r.cell(i) for i in range(len(table.names))) + " |")
    L.append("\n| tokenizer | terms in one piece | mean pieces per term |\n|---|---:|---:|")
    for i, n in enumerate(table.names):
        L.append(f"| {n} | {_fmt(table.one_piece_share(i), 2)} | {_fmt(table.mean_pieces(i), 2)} |")

    # verdicts, computed from the numbers above
    dup_norm, dup_raw = v["Unigram"]["duplicates"], v["Unigram_N_N"]["duplicates"]
    f_c, f_l = mq["Unigram"]["fertility"], mq["Unigram_L"]["fertility"]
    fe_c, fe_l = me["Unigram"]["fertility"], me["Unigram_L"]["fertility"]
    rel_q, rel_e = mq["Unigram_L"]["relative_length"], me["Unigram_L"]["relative_length"]
    bert_q = mq["bert"]["relative_length"] / mq["Unigram_L"]["relative_length"]
    shared = v["Unigram_L"]["shared_with_camemberta"]
    L.append("\n## What the data say about the papers' claims\n")
    L.append(f"1. *Normalization (punctuation spacing) reduces duplicates of a word with and without the "
             f"word-start marker*: {_verdict(dup_norm < dup_raw)} here. Unigram {v['Unigram']['size']:,} "
             f"normalized: {dup_norm:,} forms present with and without `▁`; not normalized (Unigram_N_N): "
             f"{dup_raw:,}. Most such pairs are legitimate (`▁une` / `une`, a word that is also a suffix). "
             f"The copies spacing removes are those of words that follow a glued mark or an elision: in raw text "
             f"`(patient` or `l'hôpital` leave `patient` and `hôpital` without `▁`. Pieces joining letters and "
             f"punctuation themselves: {v['Unigram_N_N']['glued_punctuation']:,} in Unigram_N_N, "
             f"{v['Unigram']['glued_punctuation']:,} in Unigram (SentencePiece never joins two Unicode scripts "
             f"in one piece). Hyphenated and slashed terms, which biotok keeps whole (`tri-antibiothérapie`), "
             f"still produce marker-less copies of whole words.")
    L.append(f"2. *Lowercasing helps fertility*: {_verdict(f_l < f_c and fe_l < fe_c)}. Unigram (cased) vs "
             f"Unigram_L: {_fmt(f_c)} vs {_fmt(f_l)} pieces per word on QUAERO test, {_fmt(fe_c)} vs "
             f"{_fmt(fe_l)} on held-out E3C.")
    L.append(f"3. *An in-domain vocabulary shortens inputs*: {_verdict(rel_q < 1 and rel_e < 1)}. biotok "
             f"Unigram_L needs {_fmt(rel_q, 2)}x the pieces of CamemBERTa on QUAERO test and {_fmt(rel_e, 2)}x on "
             f"held-out E3C ({_change(rel_q)} and {_change(rel_e)}); English BERT needs {_fmt(bert_q, 2)}x the "
             f"pieces of Unigram_L on QUAERO test. The PubMedBERT paper's 20-30 % is reached against English "
             f"vocabularies, not against a French general one.")
    L.append(f"4. *A French biomedical Unigram vocabulary shares only about 10,000 pieces with CamemBERT's "
             f"32,005*: CamemBERT v1 is not in the reference data; against CamemBERTa ({v['camemberta']['size']:,} "
             f"entries, same lab, a SentencePiece Unigram too) our Unigram_L ({v['Unigram_L']['size']:,}) shares "
             f"{shared:,} marker-normalized forms (Jaccard {_fmt(v['Unigram_L']['jaccard_camemberta'])}): "
             f"{'consistent with' if 7000 <= shared <= 13000 else 'unlike'} the paper's figure.")
    uni_seq = mq["Unigram_L"]["mean_sequence_length"]
    plain_seq = mq["Unigram_L-plain"]["mean_sequence_length"]
    plain_e = me["Unigram_L-plain"]["mean_sequence_length"] / me["Unigram_L"]["mean_sequence_length"]
    bpe_seq = mq["BPE"]["mean_sequence_length"]
    L.append(f"5. *Unigram and punctuation spacing cost a piece per mark* (a finding, not a paper claim): "
             f"both Unigram trainers (tokenizers and sentencepiece) seed multi-character pieces only from "
             f"substrings repeated across distinct words, so a standalone `,` never becomes `▁,` and costs two "
             f"pieces (`▁` + `,`); BPE learns `▁,`. biotok's `--punct-pieces` (default) adds them. Mean pieces "
             f"per QUAERO line: Unigram_L {_fmt(uni_seq, 1)}, the same without punctuation pieces "
             f"(Unigram_L-plain) {_fmt(plain_seq, 1)} ({_change(plain_seq / uni_seq)}), BPE {_fmt(bpe_seq, 1)}; "
             f"on held-out E3C the plain trainer's output is {_change(plain_e)}.")
    hf_q, hf_e = mq["Unigram_L-hf"], me["Unigram_L-hf"]
    L.append(f"6. *The two Unigram trainers differ* (a finding): with the same text, normalization and size, "
             f"the `tokenizers` trainer (Unigram_L-hf) gives {_fmt(hf_q['fertility'])} pieces per word on QUAERO "
             f"test and {_fmt(hf_e['fertility'])} on E3C, SentencePiece (Unigram_L) {_fmt(f_l)} and {_fmt(fe_l)}; "
             f"inputs are {_change(hf_q['mean_sequence_length'] / uni_seq)} with the `tokenizers` trainer on "
             f"QUAERO. Hence biotok's default, `spm-unigram`.")
    n_q = mq["Unigram_N_N"]["mean_sequence_length"] / mq["Unigram"]["mean_sequence_length"]
    n_e = me["Unigram_N_N"]["mean_sequence_length"] / me["Unigram"]["mean_sequence_length"]
    L.append(f"7. *What spacing costs in length* (a finding): without normalization (Unigram_N_N vs the cased "
             f"Unigram, both SentencePiece) inputs are {_change(n_q)} on QUAERO test and {_change(n_e)} on E3C: "
             f"a word glued to its punctuation can share a piece with it, a spaced mark is always a piece of "
             f"its own, but the glued forms also take vocabulary entries from whole words. The "
             f"fertility of Unigram_N_N is not comparable with the others: its pieces cross biotok's word "
             f"boundaries, so some biotok words (the punctuation) receive no piece.")
    (DOCS / "study.md").write_text("\n".join(L) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
