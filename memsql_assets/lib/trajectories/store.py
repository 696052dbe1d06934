"""The trajectory store: synthetic questions → exploration traces → per-phase markdown in ChromaDB.

Two-pass build. Composite tools are mined from traces, and traces are what the explorer makes; so
pass 1 explores every synthetic question with primitive tools only, composites (support ≥ θ,
length ≤ max_len) are mined from those traces, and pass 2 explores the same questions again with
the composites available. Pass 2's traces are stored; both passes feed the with/without-composites
report (same questions, same policy: the difference is the composites alone).

ChromaDB layout (one collection, rebuilt from scratch on every build): for each question a `full`
document (the whole markdown trajectory) and one document per phase present. Every document of a
question carries the *question's* embedding (not the markdown's): retrieval ranks synthetic
questions by similarity to the new question (Eq. 2) and then loads that question's documents.
Metadata: db, phase, question_id, question, template, step_count, phase_step_count, final_sql_ok,
final_sql.
A human-readable JSON copy per question goes to `json_dir/<question_id>.json` (atomic writes).

Retrieval (Eqs. 1–3): C = documents with `db` = the question's database (a Chroma `where` filter,
so other databases are never candidates); q* = the candidate with the smallest embedding distance
(similarity = 1 − d/2: Chroma's squared-L2 distance on unit vectors); τ = traj(q*), the `full`
document or the one requested phase.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsql_assets.lib.atomic import write_text_atomic
from memsql_assets.lib.memory.chroma import chroma_client, open_collection, recreate_collection
from memsql_assets.lib.memory.embeddings import EmbeddingCache, embed_texts
from memsql_assets.lib.paths import composite_tools_path, source_db_path, trajectories_dir
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.schema import SchemaStats, schema_stats
from memsql_assets.lib.trajectories.budget import allocate_budget, complexity_weight
from memsql_assets.lib.trajectories.composites import (
    CompositeTool,
    compare_stats,
    mine_composites,
    trajectory_stats,
)
from memsql_assets.lib.trajectories.coverage import coverage_report, distinct_questions, match_all
from memsql_assets.lib.trajectories.explorer import Explorer, Propose, make_explorer
from memsql_assets.lib.trajectories.llm_questions import generate_questions_llm
from memsql_assets.lib.trajectories.markdown import render_markdown, split_by_phase
from memsql_assets.lib.trajectories.phases import PHASES, default_rules
from memsql_assets.lib.trajectories.questions import generate_questions
from memsql_assets.lib.trajectories.synthetic_question import SyntheticQuestion
from memsql_assets.lib.trajectories.tools import DbTools
from memsql_assets.lib.trajectories.trace import Trace
from memsql_assets.lib.vocabulary import SOURCE_BY_PREFIX, SOURCE_NAMES

DEFAULT_COLLECTION = "memsql-trajectories-v1"
FULL = "full"
STORE_REPORT_FILE = "_store_report.json"
_QUESTION_FILE = re.compile(r"^[A-Za-z0-9_]+-[0-9a-f]{12}\.json$")
_BATCH = 1000


# ---------------------------------------------------------------- questions (Algorithm 1)


@dataclass(frozen=True)
class QuestionPlan:
    stats: dict[str, SchemaStats]
    allocation: dict[str, int]
    questions: dict[str, list[SyntheticQuestion]]

    @property
    def shortfall(self) -> dict[str, int]:
        return {db: n - len(self.questions.get(db, [])) for db, n in self.allocation.items()}

    def as_json(self) -> dict[str, Any]:
        return {
            "schema": {db: s.as_json() for db, s in self.stats.items()},
            "allocation": self.allocation,
            "questions_per_db": {db: len(q) for db, q in self.questions.items()},
            "shortfall": self.shortfall,
        }

    def to_file_json(self) -> dict[str, Any]:
        """Summary plus every question: what the synthetic_questions asset writes."""
        return {
            **self.as_json(),
            "questions": {db: [q.as_json() for q in qs] for db, qs in self.questions.items()},
        }

    @classmethod
    def from_file_json(cls, data: dict[str, Any], db_paths: Mapping[str, Path]) -> QuestionPlan:
        """Reload what `to_file_json` wrote (schema stats are re-read from the databases)."""
        stats = {db: schema_stats(db, Path(db_paths[db])) for db in sorted(data["allocation"])}
        questions = {db: [SyntheticQuestion.from_json(q) for q in qs] for db, qs in data["questions"].items()}
        return cls(stats, {db: int(n) for db, n in data["allocation"].items()}, questions)


def plan_questions(
    db_paths: Mapping[str, Path],
    total_budget: int,
    seed: int,
    exclude_questions: set[str] | frozenset[str],
    propose: Propose | None = None,
) -> QuestionPlan:
    """Allocate the budget by schema complexity and generate each database's questions: by the
    deterministic grammar, or by an LLM (`propose`) when a question model is configured."""
    stats = {db: schema_stats(db, Path(p)) for db, p in sorted(db_paths.items())}
    allocation = allocate_budget(stats, total_budget)
    questions = {
        db: (
            generate_questions_llm(db, Path(db_paths[db]), allocation[db], propose, exclude_questions)
            if propose is not None
            else generate_questions(db, Path(db_paths[db]), allocation[db], seed, exclude_questions)
        )
        for db in stats
    }
    return QuestionPlan(stats, allocation, questions)


# ---------------------------------------------------------------- exploration


def explore_all(
    questions: Mapping[str, Sequence[SyntheticQuestion]], tools: Mapping[str, DbTools], explorer: Explorer
) -> list[Trace]:
    return [explorer.explore(q, tools[db]) for db in sorted(questions) for q in questions[db]]


@contextlib.contextmanager
def tool_boxes(db_paths: Mapping[str, Path]) -> Iterator[dict[str, DbTools]]:
    """One read-only tool box per database for a whole build; its memo answers a tool call an
    earlier pass already made (the databases are read-only, so the answer cannot change)."""
    conns = {db: open_readonly(Path(p)) for db, p in sorted(db_paths.items())}
    try:
        yield {db: DbTools(conn, db, memo=True) for db, conn in conns.items()}
    finally:
        for conn in conns.values():
            conn.close()


# ---------------------------------------------------------------- build


@dataclass(frozen=True)
class StoreReport:
    collection: str
    total_budget: int
    seed: int
    theta: float | int
    max_len: int
    explorer: str
    plan: dict[str, Any]
    weights: dict[str, float]
    documents: int
    phase_distribution: dict[str, int]
    composites: list[CompositeTool]
    composite_stats: dict[str, Any]
    failed_final_sql: list[str]
    build_seconds: float
    json_dir: str
    question_ids: list[str] = field(default_factory=list)

    @property
    def allocation(self) -> dict[str, int]:
        return dict(self.plan["allocation"])

    @property
    def questions_per_db(self) -> dict[str, int]:
        return dict(self.plan["questions_per_db"])

    @property
    def all_final_sql_ok(self) -> bool:
        return not self.failed_final_sql

    def as_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "total_budget": self.total_budget,
            "seed": self.seed,
            "theta": self.theta,
            "max_len": self.max_len,
            "explorer": self.explorer,
            **self.plan,
            "weights": self.weights,
            "documents": self.documents,
            "phase_distribution": self.phase_distribution,
            "composites": [c.as_json() for c in self.composites],
            "composite_stats": self.composite_stats,
            "failed_final_sql": self.failed_final_sql,
            "build_seconds": round(self.build_seconds, 3),
            "json_dir": self.json_dir,
            "trajectories": len(self.question_ids),
        }


def build_trajectory_store(
    db_paths: Mapping[str, Path],
    total_budget: int,
    seed: int,
    theta: float | int,
    max_len: int,
    exclude_questions: set[str] | frozenset[str],
    chroma_client: Any,
    collection: str = DEFAULT_COLLECTION,
    json_dir: Path | None = None,
    *,
    questions: QuestionPlan | None = None,
    explorer_kind: str = "deterministic",
    propose: Propose | None = None,
    embeddings_store: Path | None = None,
) -> StoreReport:
    """Build (replace) the store. Pass `questions` when the synthetic_questions asset made them;
    `embeddings_store`: embed_texts' folder for the questions' vectors."""
    if json_dir is None:
        raise ValueError("json_dir is required: the store keeps a human-readable JSON copy per question")
    started = time.monotonic()
    plan = questions or plan_questions(db_paths, total_budget, seed, exclude_questions)
    with tool_boxes({db: db_paths[db] for db in plan.questions}) as tools:
        first = explore_all(plan.questions, tools, make_explorer(explorer_kind, seed=seed, propose=propose))
        composites = mine_composites(first, theta, max_len)
        traces = explore_all(
            plan.questions,
            tools,
            make_explorer(explorer_kind, seed=seed, composites=composites, propose=propose),
        )
    by_id = {q.id: q for qs in plan.questions.values() for q in qs}
    documents = _write_chroma(chroma_client, collection, traces, by_id, embeddings_store)
    _write_json(Path(json_dir), traces, by_id)
    rules = default_rules()
    phase_distribution = dict.fromkeys(PHASES, 0)
    for t in traces:
        for s in t.steps:
            phase_distribution[rules.classify(s)] += 1
    report = StoreReport(
        collection=collection,
        total_budget=total_budget,
        seed=seed,
        theta=theta,
        max_len=max_len,
        explorer=explorer_kind,
        plan=plan.as_json(),
        weights={db: round(complexity_weight(s), 4) for db, s in plan.stats.items()},
        documents=documents,
        phase_distribution=phase_distribution,
        composites=composites,
        composite_stats=compare_stats(trajectory_stats(first), trajectory_stats(traces)),
        failed_final_sql=sorted(t.question_id for t in traces if not t.final_sql_ok),
        build_seconds=time.monotonic() - started,
        json_dir=str(json_dir),
        question_ids=[t.question_id for t in traces],
    )
    write_text_atomic(Path(json_dir) / STORE_REPORT_FILE, json.dumps(report.as_json(), indent=2) + "\n")
    return report


@dataclass(frozen=True)
class StoreSettings:
    """How a home's store is built (SPEC §4: θ and N are not published, so they are configuration);
    the trajectories resource takes its defaults from here."""

    budget: int = 60  # N: synthetic questions in all
    seed: int = 0
    theta: float | int = 0.25  # composite support: a fraction of trajectories when < 1, else a count
    max_len: int = 3
    explorer: str = "deterministic"


def build_home_store(
    home: Path,
    settings: StoreSettings,
    exclude_questions: set[str] | frozenset[str],
    *,
    questions: QuestionPlan | None = None,
    propose: Propose | None = None,
    embeddings_store: Path | None = None,
) -> StoreReport:
    """`home`'s trajectory store as condition E reads it: ChromaDB, the JSON copies and
    composite_tools.json (the trajectory assets, the tests' and benches' homes and the θ/N sweep)."""
    s = settings
    report = build_trajectory_store(
        {name: source_db_path(home, name) for name in SOURCE_NAMES},
        s.budget,
        s.seed,
        s.theta if s.theta < 1 else int(s.theta),
        s.max_len,
        exclude_questions,
        chroma_client(home),
        json_dir=trajectories_dir(home) / "json",
        questions=questions,
        explorer_kind=s.explorer,
        propose=propose,
        embeddings_store=embeddings_store,
    )
    write_text_atomic(
        composite_tools_path(home), json.dumps([c.as_json() for c in report.composites], indent=2, sort_keys=True)
    )
    return report


def _write_chroma(
    client: Any,
    collection: str,
    traces: Sequence[Trace],
    by_id: Mapping[str, SyntheticQuestion],
    embeddings_store: Path | None = None,
) -> int:
    col = recreate_collection(client, collection)
    if not traces:
        return 0
    vectors = embed_texts([t.question for t in traces], embeddings_store)
    ids: list[str] = []
    embeddings: list[Any] = []
    docs: list[str] = []
    metas: list[dict[str, Any]] = []
    rules = default_rules()
    for trace, vec in zip(traces, vectors, strict=True):
        per_phase = split_by_phase(trace, rules)
        phase_steps = dict.fromkeys(PHASES, 0)
        for s in trace.steps:
            phase_steps[rules.classify(s)] += 1
        for phase, md in [(FULL, render_markdown(trace, rules)), *per_phase.items()]:
            ids.append(f"{trace.question_id}::{phase}")
            embeddings.append(vec)
            docs.append(md)
            metas.append(
                {
                    "db": trace.db,
                    "phase": phase,
                    "question_id": trace.question_id,
                    "question": trace.question,
                    "template": by_id[trace.question_id].template if trace.question_id in by_id else "",
                    "step_count": len(trace.steps),
                    "phase_step_count": len(trace.steps) if phase == FULL else phase_steps[phase],
                    "final_sql_ok": trace.final_sql_ok,
                    "final_sql": trace.final_sql or "",
                    "explorer": trace.explorer,
                }
            )
    for i in range(0, len(ids), _BATCH):
        col.add(
            ids=ids[i : i + _BATCH],
            embeddings=embeddings[i : i + _BATCH],
            documents=docs[i : i + _BATCH],
            metadatas=metas[i : i + _BATCH],
        )
    return len(ids)


def _write_json(json_dir: Path, traces: Sequence[Trace], by_id: Mapping[str, SyntheticQuestion]) -> None:
    json_dir.mkdir(parents=True, exist_ok=True)
    rules = default_rules()
    keep = set()
    for trace in traces:
        name = f"{trace.question_id}.json"
        keep.add(name)
        traj = trace.as_json()
        for step_json, step in zip(traj["steps"], trace.steps, strict=True):
            step_json["phase"] = rules.classify(step)
        q = by_id.get(trace.question_id)
        doc = {
            "question": q.as_json() if q else {"id": trace.question_id, "text": trace.question},
            "trajectory": traj,
            "markdown": {FULL: render_markdown(trace, rules), **split_by_phase(trace, rules)},
        }
        write_text_atomic(json_dir / name, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    for stale in json_dir.iterdir():
        if _QUESTION_FILE.match(stale.name) and stale.name not in keep:
            stale.unlink()


# ---------------------------------------------------------------- retrieval (Eqs. 1–3)


@dataclass(frozen=True)
class Retrieved:
    question_id: str
    question: str
    similarity: float
    markdown: str  # the whole trajectory, or the requested phase ("" when that phase is absent)
    db: str
    phase: str
    step_count: int
    final_sql_ok: bool
    final_sql: str = ""


def _hit(doc: str, meta: Mapping[str, Any], distance: float) -> Retrieved:
    return Retrieved(
        question_id=str(meta["question_id"]),
        question=str(meta["question"]),
        similarity=round(1.0 - float(distance) / 2.0, 6),
        markdown=str(doc),
        db=str(meta["db"]),
        phase=FULL,
        step_count=int(meta["step_count"]),
        final_sql_ok=bool(meta["final_sql_ok"]),
        final_sql=str(meta.get("final_sql", "")),
    )


def _where_full(db: str) -> dict[str, Any]:
    return {"$and": [{"db": db}, {"phase": FULL}]}


def nearest(
    chroma_client: Any,
    db: str,
    questions: Sequence[str],
    collection: str = DEFAULT_COLLECTION,
    embeddings: Sequence[list[float]] | None = None,
) -> list[Retrieved | None]:
    """The top-1 trajectory of `db` for each question (by its vector, when `embeddings` gives them),
    in one batched query (None: `db` has none)."""
    if not questions:
        return []
    col = open_collection(chroma_client, collection, create=False)
    by: dict[str, Any] = (
        {"query_embeddings": list(embeddings)} if embeddings is not None else {"query_texts": list(questions)}
    )
    res = col.query(
        **by,
        n_results=1,
        where=_where_full(db),
        include=["documents", "metadatas", "distances"],
    )
    return [
        _hit(docs[0], metas[0], dists[0]) if docs else None
        for docs, metas, dists in zip(res["documents"], res["metadatas"], res["distances"], strict=True)
    ]


def _opened(chroma_client: Any, collection: Any) -> Any:
    """`collection` by name, or as already opened: opening costs more than a query (Chroma reads the
    collection's record each time), so a caller that queries per turn opens it once."""
    return open_collection(chroma_client, collection, create=False) if isinstance(collection, str) else collection


def search(
    chroma_client: Any,
    db: str,
    question: str,
    k: int = 3,
    collection: Any = DEFAULT_COLLECTION,
    embedding: list[float] | None = None,
) -> list[Retrieved]:
    """The k synthetic questions of `db` most similar to `question`, each with its full trajectory.
    `embedding`: the question's vector when the caller already has it (saves embedding it again).
    `collection`: a name, or the collection as opened by `open_collection`."""
    by = {"query_embeddings": [embedding]} if embedding is not None else {"query_texts": [question]}
    return _search(_opened(chroma_client, collection), db, k, **by)[0]


def search_many(collection: Any, db: str, embeddings: Sequence[list[float]], k: int = 1) -> list[list[Retrieved]]:
    """`search` for many question vectors in one query (an opened collection)."""
    return _search(collection, db, k, query_embeddings=list(embeddings)) if embeddings else []


def _search(col: Any, db: str, k: int, **by: Any) -> list[list[Retrieved]]:
    res = col.query(
        **by,
        n_results=max(1, k),
        where=_where_full(db),
        include=["documents", "metadatas", "distances"],
    )
    out = []
    for docs, metas, dists in zip(res["documents"], res["metadatas"], res["distances"], strict=True):
        hits = [_hit(doc, m, d) for doc, m, d in zip(docs, metas, dists, strict=True)]
        out.append(sorted(hits, key=lambda h: (-h.similarity, h.question_id))[:k])
    return out


def retrieve(
    chroma_client: Any,
    db: str,
    question: str,
    phase: str | None = None,
    collection: Any = DEFAULT_COLLECTION,
    embedding: list[float] | None = None,
) -> Retrieved | None:
    """traj(argmax_{q' ∈ C(db)} sim(q', q)) — whole, or only `phase`; None when `db` has no trajectories."""
    if phase is not None and phase not in PHASES:
        raise ValueError(f"phase must be one of {list(PHASES)} or None, got {phase!r}")
    hits = search(chroma_client, db, question, k=1, collection=collection, embedding=embedding)
    if not hits:
        return None
    best = hits[0]
    if phase is None:
        return best
    col = _opened(chroma_client, collection)
    got = col.get(ids=[f"{best.question_id}::{phase}"], include=["documents"])
    markdown = got["documents"][0] if got["ids"] else ""
    return Retrieved(
        best.question_id,
        best.question,
        best.similarity,
        markdown,
        best.db,
        phase,
        best.step_count,
        best.final_sql_ok,
        best.final_sql,
    )


# ---------------------------------------------------------------- coverage of the benchmark


def store_coverage(
    chroma_client: Any,
    turns: Iterable[Mapping[str, Any]],
    collection: str = DEFAULT_COLLECTION,
    embeddings_store: Path | None = None,
) -> dict[str, Any]:
    """coverage.coverage_report of this store over the benchmark's distinct questions (per database),
    each asked with the vector conditions E and E_prompt retrieve with: the partitions' batch of every question
    (embed_texts; `embeddings_store` is its folder on disk)."""
    turns = list(turns)
    by_db = [{**t, "source": SOURCE_BY_PREFIX.get(str(t.get("source")), t.get("source"))} for t in turns]
    embed = EmbeddingCache(store=embeddings_store)
    embed.warm([str(t.get("question")) for t in turns])

    def near(db: str, questions: Sequence[str]) -> list[tuple[str, float, str] | None]:
        hits = nearest(chroma_client, db, questions, collection, [embed(q) for q in questions])
        return [(h.question_id, h.similarity, h.final_sql) if h else None for h in hits]

    return coverage_report(match_all(distinct_questions(by_db), near))
