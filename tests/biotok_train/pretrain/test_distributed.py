"""DDP through torchrun: 2 CPU processes (gloo) end with bit-identical weights."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from biotok_train.config import PrepareConfig  # noqa: E402
from biotok_train.pretrain.prepare import prepare  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_cpu_ranks_end_identical(sample_lines, tiny_wordpiece, tmp_path):
    (tmp_path / "c.txt").write_text("\n".join(sample_lines[:40]) + "\n", encoding="utf-8")
    data = prepare([str(tmp_path / "c.txt")], tiny_wordpiece, PrepareConfig(seq_len=64), tmp_path / "data", progress=False).path
    run = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "2",
           "--master_addr", "127.0.0.1", "--master_port", str(_free_port()),
           "-m", "biotok_train", "mlm", str(data), "--size", "tiny", "--steps", "3", "--batch-size", "2",
           "--grad-accum", "2", "--device", "cpu", "--out", str(run), "--no-progress", "--log-every", "1"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    meta = json.loads((run / "biotok_pretrain.json").read_text())
    digests = meta["rank_weight_sha256"]
    assert meta["world_size"] == 2 and len(digests) == 2 and digests[0] == digests[1]
    rows = [json.loads(l) for l in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]  # only rank 0 writes
    # each optimizer step saw batch 2 x accum 2 x 2 ranks sequences
    assert rows[-1]["tokens"] <= 3 * 2 * 2 * 2 * 64
