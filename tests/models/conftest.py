"""Fixtures for the model layer (test doubles live in model_fakes.py, importable by the tests)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from model_fakes import TEST_REGISTRY, registered_provider


@pytest.fixture
def fake_provider():
    with registered_provider() as provider:
        yield provider


@pytest.fixture
def write_registry(tmp_path):
    def write(text: str, name: str = "models.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


@pytest.fixture
def test_registry(write_registry):
    from memsql_assets.lib.models.registry import load_registry

    return load_registry(write_registry(TEST_REGISTRY))
