"""The embedding function computes all-MiniLM-L6-v2 without sentence-transformers: its vectors must be
those of sentence-transformers (through Chroma's own function), bit for bit, or every stored memory
and retrieval would drift."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction

from memsql_assets.lib.memory.embeddings import embedding_function


@pytest.fixture(scope="module")
def reference():
    return SentenceTransformerEmbeddingFunction(
        model_name=embedding_function().model_name, device="cpu", normalize_embeddings=True
    )


@pytest.mark.slow
def test_vectors_are_sentence_transformers_bit_for_bit(embedded_turns, reference):
    texts = list(dict.fromkeys(t["question"] for t in embedded_turns))  # ~300: ten batches of mixed lengths
    texts += ["", "x", "Ünïcödé — naïve café [PAD] ##s", "the longest question " * 60]  # empty, truncated
    assert len(texts) > 200
    for batch in (texts, texts[:1], texts[7:12], texts[40:105]):
        ours, theirs = embedding_function()(batch), reference(batch)
        assert len(ours) == len(theirs) == len(batch)
        assert all(a.dtype == np.float32 and np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))


def test_same_name_and_configuration_as_chromas_function(reference):
    # Collections record their embedding function: ours must open every collection theirs created.
    ours = embedding_function()
    assert ours.name() == reference.name() == "sentence_transformer"
    assert ours.get_config() == reference.get_config()


def test_embedding_and_a_new_collection_do_not_import_sentence_transformers(tmp_path):
    code = (
        "import sys, pathlib\n"
        "from memsql_assets.lib.memory.chroma import chroma_client, open_collection\n"
        "from memsql_assets.lib.memory.embeddings import embedding_function\n"
        "assert len(embedding_function()(['a question'])[0]) == 384\n"
        f"col = open_collection(chroma_client(pathlib.Path({str(tmp_path)!r})), 'fresh')\n"
        "col.add(ids=['1'], documents=['a question'])\n"
        "assert col.query(query_texts=['a question'], n_results=1)['ids'] == [['1']]\n"
        "print('sentence_transformers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
