"""Context modes on hand-built sessions (hand_sessions.py), one per source, whose every needed value is
visible only in the earlier turns' questions and SQL.

- reader-probe answers every memory-critical turn under B_wm5 and H in both modes, none under A (the
  return after an unmarked detour included: it reads the conversation's entity, not the detour's);
- in observed mode no memory (built-in, trajectory included, mem0, the example plug-in) is handed a
  referenced key name or a value the conversation never showed, and no prompt (nor the tools an agent
  is offered) has a Resolved block or those values;
- after a correction and an entity switch each memory's prompt shows the text that carries the new
  value, and reader-probe uses it;
- a plug-in that reads `referenced_keys` is refused in observed mode before its partition starts.

The partitions run in a child process (context_mode_child.py) with a conditions file of the test's own,
whose conditions name their mode: the way a user evaluates a benchmark in the other mode. The home has
a trajectory store of its own (synthetic questions on the same sources), which the trajectory memory
(E_prompt, and E with the agent's tools) retrieves from. reader-probe answers E in one step, without
tools: the agent-loop request it is sent still shows what the memory gave it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memsql_assets.lib.agent.turn_tools import markdown_segments
from memsql_assets.lib.harness.homes import build_home
from memsql_assets.lib.memory.chroma import chroma_client, open_collection
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.trajectories.store import DEFAULT_COLLECTION, StoreSettings
from memsql_assets.lib.vocabulary import ErrorClass
from tests.conftest import TRAJECTORY_BUDGET
from tests.evaluation_runs.hand_sessions import hand_sessions, never_shown
from tests.integration.memsql_cli import home_env

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("context_mode_child.py")
PYTHONPATH = [REPO, REPO / "examples" / "memsql-keyword-memory" / "src", REPO / "tests" / "integration" / "plugins"]
OBSERVED = {  # condition -> memory, each in observed mode
    "A_obs": "{implementation: none}",
    "B_obs": "{implementation: window, params: {turns: 2}}",
    "B_wm5_obs": "{implementation: window, params: {turns: 5}}",
    "H_obs": "{implementation: window, params: {turns: all}}",
    "C_obs": "{implementation: episodic, params: {window: 5}}",
    "D_obs": "{implementation: episodic, params: {window: 5, semantic_top_k: 1}}",
    "S_obs": "{implementation: summary, params: {max_turns: 3}}",
    "M0_obs": "{implementation: mem0, params: {top_k: 3}}",
    "KW_obs": "{implementation: 'memsql_keyword_memory:KeywordOverlapMemory'}",
    "E_prompt_obs": "{implementation: trajectory, params: {window: 5}}",
    "E_obs": "{implementation: trajectory, params: {window: 5}}",
}
AGENT_CONDITIONS = {"E_obs"}  # offered the agent loop's tools (conditions.yaml's `tools: true`)
TRAJECTORY_CONDITIONS = {"E_prompt_obs", "E_obs"}
PAYLOAD_KEYS = {"session_id", "turn_index", "source", "question", "sql", "result_summary"}
PAYLOAD_KEYS_ANNOTATED = PAYLOAD_KEYS | {"state_updates"}


@pytest.fixture(scope="module")
def home(tmp_path_factory, embedded_dbs) -> Path:
    home = tmp_path_factory.mktemp("context_modes") / "home"
    return build_home(home, embedded_dbs, hand_sessions(embedded_dbs), store=StoreSettings(budget=TRAJECTORY_BUDGET))


@pytest.fixture(scope="module")
def conditions_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("conditions") / "conditions.yaml"
    lines = ["conditions:"]
    for name, memory in {**OBSERVED, "PEEK_obs": "{implementation: 'peeking_memory:PeekKeys'}"}.items():
        lines += [f"  {name}:", f"    memory: {memory}", "    context_mode: observed"]
        lines += ["    tools: true"] if name in AGENT_CONDITIONS else []
    lines += ["  PEEK_ann:", "    memory: {implementation: 'peeking_memory:PeekKeys'}", "    context_mode: annotated"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def evaluate(home: Path, conditions_file: Path, tmp_path: Path, *conditions: str) -> dict:
    env = home_env(home)
    env["MEMSQL_CONDITIONS_FILE"] = str(conditions_file)
    env["PYTHONPATH"] = os.pathsep.join(map(str, PYTHONPATH))
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, str(CHILD), str(out), "reader-probe", *conditions],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(out.read_text(encoding="utf-8"))
    # A memory that raised leaves its turn unasked: every check below would pass on what it never saw.
    for condition, result in got.items():
        rows = result.get("rows") or []
        failed = [(r["session_id"], r["turn_index"]) for r in rows if r["error_class"] == ErrorClass.MEMORY_ERROR]
        assert not failed, f"{condition}: the memory failed on turns {failed}"
    return got


def prompt(home: Path, row: dict) -> str:
    """What the row's stored request showed the model: its messages and the tools it was offered."""
    record = RequestStore.at_home(home).get(row["request_key"])
    assert record is not None, row
    request = record["request"]
    tools = json.dumps(request["params"].get("tools") or [], ensure_ascii=False)
    return "\n".join([*(str(m["content"]) for m in request["messages"]), tools])


def trajectory_texts(home: Path) -> list[str]:
    """Every trajectory in the store and each of its phase segments (what E_prompt and E paste), longest
    first: a synthetic question's exploration of the database, whose rows may hold any id, and no
    annotation of the benchmark's."""
    store = open_collection(chroma_client(home), DEFAULT_COLLECTION, create=False)
    docs = store.get(include=["documents"])["documents"]
    return sorted({t for d in docs for t in (d, *markdown_segments(d).values())}, key=len, reverse=True)


def critical(result: dict) -> list[dict]:
    return [r for r in result["rows"] if r["memory_critical"]]


def test_reader_probe_reads_every_value_from_earlier_turns_in_both_modes(home, conditions_file, tmp_path):
    got = evaluate(home, conditions_file, tmp_path, "A", "B_wm5", "H", "A_obs", "B_wm5_obs", "H_obs")
    for condition in ("B_wm5", "H", "B_wm5_obs", "H_obs"):
        wrong = [(r["session_id"], r["turn_index"]) for r in critical(got[condition]) if not r["ex_strict"]]
        assert not wrong, f"{condition}: {wrong}"
    for condition in ("A", "A_obs"):
        assert critical(got[condition]) and not any(r["ex_strict"] for r in critical(got[condition])), condition
    assert {got[c]["summary"]["context_mode"] for c in ("A", "B_wm5", "H")} == {"annotated"}
    assert {got[c]["summary"]["context_mode"] for c in ("A_obs", "B_wm5_obs", "H_obs")} == {"observed"}
    # The annotated prompt has the Resolved block; the observed one never does.
    second = next(r for r in got["B_wm5"]["rows"] if r["session_id"].startswith("NW") and r["turn_index"] == 2)
    assert "Resolved context:" in prompt(home, second)


def test_observed_memories_see_only_what_the_conversation_showed(home, conditions_file, tmp_path):
    got = evaluate(home, conditions_file, tmp_path, *OBSERVED)
    hidden = never_shown(hand_sessions({p.stem: p for p in (home / "sources").glob("*.sqlite")}))
    # What every prompt shows without memory (the source guidance names `customer_id` as a column).
    shown_without_memory = {t for t in hidden if any(t in prompt(home, r) for r in got["A_obs"]["rows"])}
    assert hidden - shown_without_memory, "the check has values to look for"
    for condition, result in got.items():
        assert "error" not in result, (condition, result)
        assert result["summary"]["context_mode"] == "observed"
        calls = result["calls"]
        if condition != "A_obs":  # A keeps nothing: the runner skips its memory
            assert {c["referenced_keys"] for c in calls if c["call"] == "retrieve"} == {"WithheldKeys"}, condition
            assert all(set(c["payload"]) == PAYLOAD_KEYS for c in calls if c["call"] == "persist"), condition
            assert any(c["call"] == "persist" for c in calls), condition
        handed = json.dumps(calls, ensure_ascii=False)
        prompts = "\n".join(prompt(home, r) for r in result["rows"])
        if condition in TRAJECTORY_CONDITIONS:  # the rest of the prompt is checked, the store's text aside
            assert "Reference trajectory from a similar solved question:" in prompts, condition
            assert (condition in AGENT_CONDITIONS) == ('"submit_sql"' in prompts), "the agent loop's tools"
            for text in trajectory_texts(home):
                prompts = prompts.replace(text, "")
        for text in hidden - shown_without_memory:
            assert text not in handed, (condition, text, "handed to the memory")
            assert text not in prompts, (condition, text, "in a prompt")
        assert "Resolved context:" not in prompts, condition
        if condition in ("C_obs", "D_obs", "M0_obs"):
            assert "Facts the memory extracted" in prompts, condition
    # The grader keeps the annotations: missing keys are still reported where the window lost a value.
    assert any(r["missing_keys"] != "[]" for r in got["B_obs"]["rows"])


def test_annotated_payloads_keep_the_annotations(home, conditions_file, tmp_path):
    got = evaluate(home, conditions_file, tmp_path, "B_wm5", "PEEK_ann")
    persisted = [c["payload"] for c in got["B_wm5"]["calls"] if c["call"] == "persist"]
    assert persisted and all(set(p) == PAYLOAD_KEYS_ANNOTATED for p in persisted)
    assert {c["referenced_keys"] for c in got["PEEK_ann"]["calls"] if c["call"] == "retrieve"} == {"tuple"}


# (session prefix, turn after the correction, the corrected value), (… after the entity switch, its name)
CORRECTION = {"NW": (4, "2019"), "SEC": (4, "2021"), "BIRD": (4, "'C'")}
SWITCH = {"NW": (5, "Au Bon Panier Blanc")}
# mem0 retrieves the top 3 earlier turns by the question's similarity: "And its freight in those years?"
# does not bring back "Now Au Bon Panier Blanc instead: …", so it loses the switch (what M0 measures).
LOSES_THE_SWITCH = {"M0_obs"}


@pytest.mark.parametrize("condition", [c for c in OBSERVED if c != "A_obs"])
def test_a_correction_and_an_entity_switch_reach_the_prompt_and_the_probe(home, conditions_file, tmp_path, condition):
    rows = evaluate(home, conditions_file, tmp_path, condition)[condition]["rows"]
    for cases in (CORRECTION, {} if condition in LOSES_THE_SWITCH else SWITCH):
        for prefix, (turn, value) in cases.items():
            row = next(r for r in rows if r["session_id"].startswith(f"{prefix}-") and r["turn_index"] == turn)
            assert value in prompt(home, row), (condition, prefix, turn, value)
            assert row["ex_strict"], (condition, prefix, turn, "reader-probe did not use the new value")


def test_a_plugin_reading_referenced_keys_is_refused_in_observed_mode(home, conditions_file, tmp_path):
    got = evaluate(home, conditions_file, tmp_path, "PEEK_obs")
    error = got["PEEK_obs"]["error"]
    assert "condition PEEK_obs" in error and "referenced_keys" in error and str(conditions_file) in error
    assert got["PEEK_obs"].get("rows") is None
    assert not (home / "results" / "model=reader-probe" / "condition=PEEK_obs").exists(), "the partition never started"
