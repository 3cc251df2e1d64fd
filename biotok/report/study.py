"""The French biomedical tokenizer study's measurements and its page, docs/study.md: vocabulary
statistics, fragmentation on the held-out texts, the term table, and the numbered verdicts on the
papers' claims (AliBERT, PubMedBERT), every sentence computed from the numbers (study.json).

The recipe that builds the corpora and trains the variants is
``python -m benchmarks.experiments.study``; ``--from-json`` rewrites study.md from study.json alone.
"""

from __future__ import annotations

from pathlib import Path

import regex

from biotok.config import TrainConfig
from biotok.report.build import build_report
from biotok.terminology import read_terms_file, segment_terms
from biotok.vocab import diff_vocab, duplicates

HELDOUT = {"heldout_quaero": "QUAERO test", "heldout_e3c": "E3C clinical cases (held out)"}
"""The held-out texts, as study.json names them, and their titles."""

_GLUED = regex.compile(r"\p{L}.*[()\[\]{},;:!?\"%]|[()\[\]{},;:!?\"%].*\p{L}|\p{L}\.$")


def glued_pieces(tok) -> list[str]:
    """Pieces that glue a word to punctuation ('jours.', '(patient'), most frequent first."""
    vocab = tok.get_vocab()
    return sorted((p for p in vocab if _GLUED.search(p.lstrip("▁"))), key=vocab.__getitem__)


# --- measurements -----------------------------------------------------------------------------
def measure(toks: dict, order: list[str], paths: dict[str, Path], fig: Path, terms: Path) -> dict:
    """Vocabulary statistics, fragmentation on the held-out texts (+ report figures), term table.

    ``toks``: name -> tokenizer, ``order``: their order (CamemBERTa first: lengths are relative to
    it), ``paths``: train and the :data:`HELDOUT` texts, ``fig``: where the figures go, ``terms``:
    the term list."""
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
    for key, label in HELDOUT.items():
        lines = paths[key].read_text(encoding="utf-8").splitlines()
        # no report.html here: it would embed the reference tokenizers' vocabularies (and ~4 MB each)
        rep = build_report(tok_list, lines, fig / key, force=True, corpus_label=label, html=False)
        res["heldout"][key]["metrics"] = {
            r.name: {**{k: v for k, v in r.as_dict().items() if isinstance(v, (int, float))}, "relative_length": rel}
            for r, rel in zip(rep.comparison.results, rep.comparison.relative_length)
        }
    res["terms"] = segment_terms(tok_list, read_terms_file(terms)).as_dict()
    return res


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
    held = res["inputs"]["held_out_pamj"]
    L = ["## Data\n", "| text | lines | MB |\n|---|---:|---:|"]
    for k, d in {**res["training_text"], **res["heldout"]}.items():
        L.append(f"| {k} | {d['lines']:,} | {d['mb']} |")
    L.append(f"\nTraining: E3C PAMJ clinical cases (all but the last {held} documents), the first "
             f"{res['leaflets_mb']:g} MB of the E3C drug leaflets, QUAERO train, LabForSIMS dialogues and the "
             "French WMT biomedical abstracts (MEDLINE, SciELO, EDP). Held out: QUAERO test (MEDLINE titles "
             f"and EMEA leaflets) and the last {held} PAMJ clinical cases. The biotok variants follow "
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
    for key, title in HELDOUT.items():
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


def write_markdown(res: dict, command: str) -> str:
    """docs/study.md from the study's numbers alone (``res`` is what study.json holds; ``command``
    the one that rebuilds it)."""
    L = ["# Which vocabulary for French biomedical text? A study with biotok\n",
         f"Reproduce everything here (tables, figures, verdicts) with `{command}`",
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




__all__ = ["HELDOUT", "VERDICTS", "glued_pieces", "measure", "verdict_duplicates", "verdict_in_domain",
           "verdict_lowercase", "verdict_punct_pieces", "verdict_shared", "verdict_spacing_length", "verdict_trainers",
           "verdicts", "write_markdown"]
