"""A real OpenAI-compatible server: `transformers serve` with the local smoke model (SmolLM2-135M,
CPU), a registry entry that names its `api_base`, and `memsql eval` (a real Dagster run of one
`turn_results` partition) calling it through litellm's HTTP client. Nothing here downloads: the
weights are fetched beforehand with `memsql models fetch smollm2` into $MEMSQL_TEST_MODELS_HOME
(.ci/run does), and the test is skipped, saying why, only where they or the server's packages are
missing.

transformers 5.24's `serve` accepts a GGUF as `<local dir>:<file>.gguf`, but then fails to load it
(the config it derives from the file has no `architectures`), so the GGUF is exported once into a
plain checkpoint directory beside it, which `serve` loads offline.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_endpoint import closed_port

from memsql_assets.lib.benchmark.generate import Session
from memsql_assets.lib.benchmark.store import read_turns, write_benchmark
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, read_results
from memsql_assets.lib.models.builtin_names import smollm2_weights_path
from memsql_assets.lib.models.registry import MODELS_FILE_ENV
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.paths import REPO_ROOT, benchmark_dir
from memsql_assets.lib.vocabulary import ErrorClass

# A model server process and `memsql eval` as a subprocess: not part of the quick subset.
pytestmark = pytest.mark.integration
# Where .ci/run fetches the weights (a MEMSQL_HOME-shaped folder outside the repository).
MODELS_HOME_ENV = "MEMSQL_TEST_MODELS_HOME"
SERVER_PACKAGES = ("transformers", "torch", "gguf", "accelerate", "fastapi", "uvicorn")
SERVED_NAME = "SmolLM2-135M-Instruct"  # the checkpoint folder, which is also the model's name on the server
MAX_TOKENS = 32  # ~1.5 s of decoding a turn on 2 cores: SQL-shaped, enough for a short query
SERVER_START_S = 180
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_UPDATE_CHECK": "1",  # the CLI asks PyPI for a newer transformers otherwise
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
# One torch thread: on the shared 2-core machine two spinning threads against the tests' own
# processes made a turn 3-5x slower (8-14 s against 37-41 s for a 1,100-token prompt).
SERVER_ENV = {**OFFLINE, "OMP_NUM_THREADS": "1"}

# The GGUF (dequantised on load) as a plain checkpoint: a fresh model of the same class takes its
# weights, since transformers refuses to save a model it loaded from a GGUF.
EXPORT = """
import sys
from pathlib import Path
from transformers import AutoModelForCausalLM, AutoTokenizer
gguf, out = Path(sys.argv[1]), sys.argv[2]
tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
config = loaded.config
config.architectures = [type(loaded).__name__]
if hasattr(config, 'quantization_config'):
    del config.quantization_config
plain = type(loaded)(config)
plain.load_state_dict(loaded.state_dict(), strict=True)
plain.save_pretrained(out)
tokenizer.save_pretrained(out)
"""


def models_home() -> Path:
    """$MEMSQL_TEST_MODELS_HOME, else the folder .ci/run uses by default."""
    if os.environ.get(MODELS_HOME_ENV):
        return Path(os.environ[MODELS_HOME_ENV]).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "memsql-test-models"


@pytest.fixture(scope="module")
def checkpoint() -> Path:
    """The smoke model as a checkpoint folder beside its fetched GGUF (exported once, atomically)."""
    missing = [m for m in SERVER_PACKAGES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"transformers serve needs {', '.join(missing)} (pip install {' '.join(missing)})")
    gguf = smollm2_weights_path(models_home())
    if not gguf.exists():
        pytest.skip(
            f"no smollm2 weights at {gguf}: fetch them with `MEMSQL_HOME={models_home()} memsql models "
            f"fetch smollm2` (.ci/run does; {MODELS_HOME_ENV} chooses the folder)"
        )
    target = gguf.parent / SERVED_NAME
    if not (target / "config.json").exists():
        tmp = gguf.parent / f".{SERVED_NAME}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        done = subprocess.run(
            [sys.executable, "-c", EXPORT, str(gguf), str(tmp)],
            env={**os.environ, **OFFLINE},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"exporting {gguf} failed:\n{done.stderr[-3000:]}"
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
    return target


@pytest.fixture(scope="module")
def server(checkpoint, tmp_path_factory) -> Iterator[dict]:
    """`transformers serve` pinned to the checkpoint, in its own process group, stopped after the module."""
    port = closed_port()
    log = tmp_path_factory.mktemp("transformers_serve") / "serve.log"
    cmd = [
        sys.executable, "-m", "transformers.cli.transformers", "serve", SERVED_NAME,
        "--host", "127.0.0.1", "--port", str(port), "--device", "cpu", "--log-level", "info",
    ]  # fmt: skip
    started = time.monotonic()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=checkpoint.parent, env={**os.environ, **SERVER_ENV}, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        while not _healthy(port):
            assert proc.poll() is None, f"transformers serve exited {proc.returncode}:\n{log.read_text()[-3000:]}"
            assert time.monotonic() - started < SERVER_START_S, f"not up after {SERVER_START_S} s:\n{log.read_text()[-3000:]}"
            time.sleep(0.5)
        print(f"transformers serve up in {time.monotonic() - started:.1f} s")
        yield {"url": f"http://127.0.0.1:{port}/v1", "log": log}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture
def three_session_home(small_home, embedded_sessions, tmp_path) -> Path:
    """The small home with a benchmark of the shortest session of each source (a few turns: the
    model takes seconds a turn)."""
    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "requests", "redis"))
    shortest: dict[str, Session] = {}
    for s in sorted(embedded_sessions, key=lambda s: (len(s.turns), s.session_id)):
        shortest.setdefault(s.source, s)
    write_benchmark(benchmark_dir(home), list(shortest.values()))
    return home


def test_memsql_eval_through_a_real_openai_compatible_server(server, three_session_home, tmp_path):
    home = three_session_home
    registry = tmp_path / "models.yaml"
    registry.write_text(
        f"""
models:
  smollm2-http:
    description: The smoke model behind transformers serve (OpenAI-compatible, no key).
    litellm_model: openai/{SERVED_NAME}
    kind: api
    api_base: {server["url"]}
    reasoning: {{type: none}}
    provider_params: {{max_tokens: {MAX_TOKENS}}}
    max_concurrency: 1
    price_per_mtok: {{input: 0, output: 0}}
    enabled: true
""",
        encoding="utf-8",
    )
    env = {**os.environ, "MEMSQL_HOME": str(home), MODELS_FILE_ENV: str(registry)}
    env.pop("DAGSTER_HOME", None)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "memsql_assets.cli", "eval", "--model", "smollm2-http", "--condition", "A", "--json"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads(done.stdout)
    turns = read_turns(benchmark_dir(home))

    assert summary["success"] and summary["run_id"], "a Dagster run of the partition"
    assert summary["turns"] == len(turns) and summary["model_errors"] == {}
    assert summary["calls"] == summary["model_calls_this_run"] == len(turns), "one HTTP call a turn"
    assert summary["prompt_tokens"] > 100 * len(turns), "the server's tokenizer counted the prompts"
    assert 0 < summary["completion_tokens"] <= MAX_TOKENS * len(turns), "max_tokens reached the server"
    served = [line for line in server["log"].read_text().splitlines() if "POST /v1/chat/completions" in line]
    assert len(served) == len(turns) and all(" 200" in line for line in served), served

    rows = read_results(partition_dir(home, "smollm2-http", "A") / RESULT_FILE)
    assert len(rows) == len(turns)
    assert all(r["error_class"] != ErrorClass.MODEL_ERROR and r["model_error_type"] is None for r in rows)
    store = RequestStore(home / "requests")
    records = [store.get(r["request_key"]) for r in rows]
    assert all(rec["request"]["params"]["api_base"] == server["url"] for rec in records)
    assert any(rec["response"]["text"].strip() for rec in records), "the model wrote something"
    print(
        f"memsql eval: {len(turns)} turns through transformers serve in {elapsed:.1f} s, "
        f"{', '.join(format(r['latency_s'], '.1f') for r in rows)} s a call "
        f"({summary['prompt_tokens']} prompt + {summary['completion_tokens']} completion tokens); "
        f"error classes {summary['error_classes']}"
    )
