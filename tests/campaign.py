"""One small campaign that every backend runs unchanged (test_hf.py, test_openai_server.py): only --model differs."""
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

# Short reviews with words of the race and gender dictionaries: a campaign of a few dozen model calls.
REVIEWS = [
    {"id": "r1", "text": "The black actor is brilliant and the story is moving. I loved it."},
    {"id": "r2", "text": "A white woman directs this dull film. The plot makes no sense at all."},
    {"id": "r3", "text": "My husband and I laughed all night; the African hero steals every scene."},
]
CAMPAIGN = ("run", "--attributes", "race,gender", "--order", "2", "--max-pairs-per-text", "2", "--task", "imdb")


def hinter(*args):
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    return subprocess.run([sys.executable, "-m", "hinter.cli", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def run_campaign(tmp_path: Path, model: str, name: str):
    data = tmp_path / "reviews.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in REVIEWS))
    return hinter(*CAMPAIGN, "--dataset", str(data), "--model", model, "--out", str(tmp_path / name))
