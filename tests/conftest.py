from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def parser():
    from hinter.validity import SpacyParser
    return SpacyParser()


@pytest.fixture(scope="session")
def imdb_texts():
    from hinter.datasets import load_dataset
    return [r.text for r in load_dataset("imdb", limit=40)]


@pytest.fixture(scope="session")
def gemma():
    pytest.importorskip("llama_cpp")
    from hinter.models.gguf import GGUFModel, default_gguf_path
    from hinter.tasks import IMDB
    return GGUFModel(default_gguf_path(), IMDB)
