"""benchmarks/corpora.py: the readers the French recipes build their texts from (probe_fr,
study), and the split and line writer they share."""

from __future__ import annotations

from itertools import islice

from benchmarks import corpora as C


def test_write_lines_and_held_out_split(tmp_path):
    out = C.write_lines(tmp_path / "a.txt", ["x", "y"], head="h\n")
    assert out.read_text(encoding="utf-8") == "h\nx\ny\n" and not (tmp_path / "a.tmp").exists()
    train, held = C.held_out_split((f"d{i}" for i in range(7)), tmp_path / "s", 3)
    assert held.read_text(encoding="utf-8") == "d2\nd5\n"
    assert train.read_text(encoding="utf-8") == "d0\nd1\nd3\nd4\nd6\n"
    assert C.held_out_split(["other"], tmp_path / "s", 3) == (train, held)  # written once
    assert held.read_text(encoding="utf-8") == "d2\nd5\n"
    assert C.paragraphs(" a \n\n  \nb c\n") == ["a", "b c"]


def test_the_french_readers(shared_data):
    assert next(C.cim10_labels(as_written=True)) == "Choléra"
    assert any("  " in label for label in C.cim10_labels(as_written=True))  # as the file has them
    assert not any("  " in label for label in C.cim10_labels())
    mcqa = list(islice(C.frenchmedmcqa_texts(), 7))  # a question, its five answers, the next question
    assert mcqa[0].endswith("les particules alpha") and mcqa[1] == "Sont formées de noyaux d'hélium"
    assert mcqa[6].startswith("Parmi les bactéries suivantes")
    leaflets = list(C.leaflet_paragraphs(0.01))
    size = sum(len(p.encode("utf-8")) + 1 for p in leaflets)
    assert size >= 10_000 and all(p and "\n" not in p and p == p.strip() for p in leaflets)
    assert leaflets[0].startswith("A 313 200 000 UI POUR CENT, pommade")
    pamj = C.pamj_texts()
    assert len(pamj) == 1520 and pamj[0].startswith("Cas n° 1 Un cycliste")
    assert sum("\n" in case for case in pamj) == 572  # their own line breaks kept (pamj_documents joins them)
    test = C.quaero_paragraphs("test")
    assert len(test) == 1413 and test[:2] == ["EMEA / H / C / 612", "Qu ’ est-ce qu IONSYS"]
    assert C.labforsims_turns()[:2] == ["Bonjour Madame. Pourquoi vous venez ici\xa0?", "Bonjour Bah, j’ai mal au ventre."]


def test_french_biomedical_lines_are_wmt_cim10_mcqa_then_leaflets(shared_data):
    lines = C.french_biomedical_lines(0.001)
    assert next(lines) == next(C.wmt_biomed_french())
    rest = list(lines)
    assert rest[-len(list(C.leaflet_paragraphs(0.001))):] == list(C.leaflet_paragraphs(0.001))
    assert "Choléra" in rest
