from tests.test_finetune import *
def test_y(tiny_model, shared_data, tmp_path):
    full = load_dataset("quaero-medline", shared_data / "corpora")
    ds = NerDataset("quaero-subset", full.train[:160], full.dev[:40], full.test[:80])
    res = finetune_ner(tiny_model, ds, NerConfig(epochs=3, lr=5e-3, batch_size=16, max_length=64, seed=0, patience=3), tmp_path / "ner", progress=True)
    print(format_report(res)); print(recompute(tmp_path / "ner" / "test_predictions.tsv")["n_pred"])
