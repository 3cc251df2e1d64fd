"""The core stays light: importing biotok (and its CLI) never imports torch or transformers."""

from __future__ import annotations

import subprocess
import sys


def test_import_biotok_does_not_import_torch():
    code = (
        "import sys, biotok, biotok.cli, biotok.train, biotok.normalize, biotok.tokenizer;"
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_api():
    import biotok

    assert callable(biotok.normalize) and callable(biotok.train_tokenizer) and callable(biotok.load)
    assert biotok.normalize("a,b") == "a , b"
