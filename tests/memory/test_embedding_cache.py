"""embed_texts' folder on disk: a batch embedded once is read back by other processes and later runs
with the very same vectors, without loading the model; an unreadable file is computed again."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from memsql_assets.lib.memory.embeddings import embed_texts, embedding_function

TEXTS = ["How many accounts were opened in 1995?", "And in 1996?", "Total revenue by year"]


def _in_new_process(store, texts) -> list[str]:
    code = (
        "import json, sys, pathlib\n"
        "from memsql_assets.lib.memory.embeddings import embed_texts\n"
        f"vectors = embed_texts({texts!r}, pathlib.Path({str(store)!r}))\n"
        "print(json.dumps(vectors))\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


def test_a_stored_batch_is_read_back_exactly_without_loading_the_model(tmp_path):
    store = tmp_path / "embeddings"
    vectors = embed_texts(TEXTS, store)
    direct = [v.tolist() for v in embedding_function()(TEXTS)]
    assert vectors == direct and len(list(store.glob("*.npy"))) == 1
    read_back, torch_loaded = _in_new_process(store, TEXTS)
    assert np.array_equal(np.array(json.loads(read_back)), np.array(direct)) and torch_loaded == "False"
    # Another batch (the same texts in another order pad differently) is another file.
    embed_texts(TEXTS[::-1], store)
    assert len(list(store.glob("*.npy"))) == 2


@pytest.mark.slow
def test_an_unreadable_file_is_computed_again_and_replaced(tmp_path):
    store = tmp_path / "embeddings"
    embed_texts(TEXTS[:2], store)
    (path,) = store.glob("*.npy")
    path.write_bytes(b"not numpy")
    read_back, torch_loaded = _in_new_process(store, TEXTS[:2])
    assert torch_loaded == "True" and np.load(path).shape == (2, 384)
    assert json.loads(read_back) == embed_texts(TEXTS[:2], store)
