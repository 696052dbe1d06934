"""all-MiniLM-L6-v2 sentence embeddings in plain torch: the same vectors as sentence-transformers, bit
for bit, without importing it.

Importing sentence-transformers (and through it transformers' model zoo, scipy, scikit-learn and
pandas) was, in every process that embeds, the main command's longest single wait. The model
is a 6-layer BERT encoder followed by mean pooling and L2 normalisation; this module runs exactly the
operations sentence-transformers 6 runs on CPU (PyTorch's scaled-dot-product attention with a boolean
padding mask, mean over the real tokens, normalised twice: the model's Normalize module, then
`encode(normalize_embeddings=True)`), on batches formed the same way (texts sorted by length, 32 a
batch), so that every vector is identical: tests/memory/test_minilm.py compares them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

BATCH_SIZE = 32  # sentence-transformers' encode default: a text's vector depends on its batch's padding
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)


class MiniLM:
    """The encoder of a sentence-transformers BERT model directory (config, safetensors, tokenizer)."""

    def __init__(self, path: Path):
        self.path = path
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])

    # The weights (and torch, through safetensors) load on the first text embedded: a process whose
    # vectors all come from the embedding cache never pays for them.
    @functools.cached_property
    def w(self) -> dict[str, Any]:
        from safetensors.torch import load_file

        return {k.removeprefix("bert."): v for k, v in load_file(str(self.path / "model.safetensors")).items()}

    @functools.cached_property
    def tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        return tokenizer

    def load(self) -> None:
        """Load the weights and tokenizer now (a fork server's parent, before its children embed)."""
        self.w, self.tokenizer  # noqa: B018 - cached on first access

    def encode(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One L2-normalised float32 vector per text, in the order given."""
        import torch

        order = np.argsort([-len(t) for t in texts])  # sentence-transformers' order (and sort kind)
        out: list[Any] = [None] * len(texts)
        with torch.inference_mode():
            for start in range(0, len(order), BATCH_SIZE):
                batch = order[start : start + BATCH_SIZE]
                vectors = self._embed([texts[i] for i in batch])
                for row, i in enumerate(batch):
                    out[i] = vectors[row].numpy().astype(np.float32)
        return out

    def _embed(self, texts: list[str]) -> Any:
        import torch
        import torch.nn.functional as F

        encoded = self.tokenizer.encode_batch(texts)
        ids = torch.tensor([e.ids for e in encoded])
        mask = torch.tensor([e.attention_mask for e in encoded])
        types = torch.tensor([e.type_ids for e in encoded])
        tokens = self._encoder(ids, mask, types)
        weights = mask.unsqueeze(-1).to(tokens.dtype)
        mean = (tokens * weights).sum(dim=1, dtype=tokens.dtype) / torch.clamp(
            weights.sum(dim=1, dtype=tokens.dtype), min=1e-9
        )
        return F.normalize(F.normalize(mean, p=2, dim=-1), p=2, dim=1)

    def _encoder(self, ids: Any, mask: Any, types: Any) -> Any:
        import torch
        import torch.nn.functional as F

        w = self.w
        batch, length = ids.shape

        def linear(x: Any, name: str) -> Any:
            return F.linear(x, w[f"{name}.weight"], w[f"{name}.bias"])

        def norm(x: Any, name: str) -> Any:
            return F.layer_norm(x, (x.shape[-1],), w[f"{name}.weight"], w[f"{name}.bias"], self.eps)

        x = F.embedding(ids, w["embeddings.word_embeddings.weight"])
        x = x + F.embedding(types, w["embeddings.token_type_embeddings.weight"])
        x = x + F.embedding(torch.arange(length).unsqueeze(0), w["embeddings.position_embeddings.weight"])
        x = norm(x, "embeddings.LayerNorm")
        # No mask where nothing is padded, as transformers does: the mask decides which SDPA kernel runs.
        attend = None if bool(mask.all()) else mask.bool()[:, None, None, :].expand(batch, 1, length, length)
        head = x.shape[-1] // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (
                linear(x, f"{p}.attention.self.{n}").view(batch, length, -1, head).transpose(1, 2)
                for n in ("query", "key", "value")
            )
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=attend, dropout_p=0.0, scale=head**-0.5)
            a = a.transpose(1, 2).contiguous().reshape(batch, length, -1).contiguous()
            x = norm(linear(a, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            h = F.gelu(linear(x, f"{p}.intermediate.dense"))
            x = norm(linear(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return x
