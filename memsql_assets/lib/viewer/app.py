"""The viewer's web app (FastAPI + Jinja2): `/` the list, `/turn/...` one turn, `/compare` two partitions."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from memsql_assets.lib.viewer import data, detail

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).with_name("templates")))


def turn_url(model: str, condition: str, session: str, turn: int, epoch: int, history: str = "model") -> str:
    told = "" if history == "model" else f"?history={history}"  # a gold-history evaluation's turn
    return f"/turn/{model}/{condition}/{session}/{turn}/{epoch}{told}"


TEMPLATES.env.globals["turn_url"] = turn_url


def _not_found(request: Request, what: str, value: str, choices: list[str]) -> HTMLResponse:
    return TEMPLATES.TemplateResponse(
        request, "missing.html", {"what": what, "value": value, "choices": choices}, status_code=404
    )


def _unknown_partition(
    request: Request, index: data.TurnIndex, model: str, condition: str
) -> HTMLResponse | None:
    index.connection()
    models = sorted({p.model for p in index.partitions})
    if model not in models:
        return _not_found(request, "model", model, models)
    conditions = sorted(p.condition for p in index.partitions if p.model == model)
    if condition not in conditions:
        return _not_found(request, f"condition of {model}", condition, conditions)
    return None


def create_app(home: Path) -> FastAPI:
    """The routes are thin closures over one TurnIndex; each page is built by a function below."""
    app = FastAPI(title="memsql view", docs_url=None, redoc_url=None, openapi_url=None)
    index = data.TurnIndex(home)

    @app.exception_handler(data.NoResultsError)
    async def no_results(request: Request, exc: data.NoResultsError) -> HTMLResponse:
        return TEMPLATES.TemplateResponse(request, "empty.html", {"message": str(exc)}, status_code=404)

    @app.get("/", response_class=HTMLResponse)
    def turn_list(request: Request, page: int = 1) -> HTMLResponse:
        return _list_page(request, index, page)

    @app.get("/turn/{model}/{condition}/{session}/{turn}/{epoch}", response_class=HTMLResponse)
    def one_turn(
        request: Request, model: str, condition: str, session: str, turn: int, epoch: int, history: str = "model"
    ) -> HTMLResponse:
        unknown = _unknown_partition(request, index, model, condition)
        if unknown:
            return unknown
        row = data.one_turn(index, model, condition, session, turn, epoch, history)
        if row is None:
            return _not_found(request, f"turn of {model}/{condition}", f"{session} #{turn} epoch {epoch}", [])
        return TEMPLATES.TemplateResponse(request, "turn.html", _turn_context(home, row))

    @app.get("/compare", response_class=HTMLResponse)
    def compare(request: Request, left: str = "", right: str = "") -> HTMLResponse:
        return _compare_page(request, index, left, right)

    return app


def _list_page(request: Request, index: data.TurnIndex, page: int) -> HTMLResponse:
    """`/`: one page of turns under the query's filters (an unknown filter value is a 404)."""
    params = {k: v for k, v in request.query_params.items() if k != "page" and v}
    for key in ("benchmark", "model", "condition"):
        if params.get(key):
            known = sorted({getattr(p, key) for p in (index.connection() and index.partitions)})
            if params[key] not in known:
                return _not_found(request, key, params[key], known)
    total, rows = data.list_turns(index, params, page)
    pages = max(1, -(-total // data.PAGE_SIZE))
    return TEMPLATES.TemplateResponse(
        request,
        "list.html",
        {
            "rows": rows,
            "total": total,
            "page": page,
            "pages": pages,
            "params": params,
            "choices": index.choices(),
            "partitions": [p.key for p in index.partitions],
            "page_url": lambda n: "/?" + urlencode({**params, "page": n}),
        },
    )


def _compare_page(request: Request, index: data.TurnIndex, left: str, right: str) -> HTMLResponse:
    """`/compare`: the turns whose correctness flips between two partitions, grouped by source and
    turn; the bare form when either side is not chosen yet."""
    index.connection()
    keys = [p.key for p in index.partitions]
    if not left or not right:
        return TEMPLATES.TemplateResponse(
            request, "compare.html", {"keys": keys, "left": left, "right": right, "groups": None}
        )
    for side in (left, right):
        if side not in keys:
            return _not_found(request, "partition (model/condition[@benchmark][~gold])", side, keys)
    lpart, rpart = index.partition(left), index.partition(right)
    flips = data.flips(index, lpart, rpart)
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for f in flips:
        groups[(f["source"], f["turn_index"])].append(f)
    return TEMPLATES.TemplateResponse(
        request,
        "compare.html",
        {
            "keys": keys,
            "left": left,
            "right": right,
            "lpart": lpart,
            "rpart": rpart,
            "groups": dict(groups),
            "n_flips": len(flips),
            "gained": sum(f["r_class"] == "correct" for f in flips),
            "lost": sum(f["l_class"] == "correct" for f in flips),
        },
    )


def _turn_context(home: Path, row: dict[str, Any]) -> dict[str, Any]:
    record = detail.request_record(home, row["request_key"])
    request = (record or {}).get("request") or {}
    response = (record or {}).get("response") or {}
    model_result = detail.preview(home, row["source"], row["extracted_sql"])
    truth_result = detail.preview(home, row["source"], row["gt_sql"])
    return {
        "row": row,
        "messages": detail.prompt_blocks(request.get("messages") or []),
        "record_found": record is not None,
        "reasoning": response.get("reasoning") or "",
        "steps": response.get("steps") or (record or {}).get("steps"),
        "model_result": model_result,
        "truth_result": truth_result,
        "preview_rows": detail.PREVIEW_ROWS,
        "why": detail.why_different(model_result, truth_result),
        "diff": detail.sql_diff(row["extracted_sql"], row["gt_sql"]),
        "resolved": detail.parse_json(row["resolved_keys"], {}),
        "missing": detail.parse_json(row["missing_keys"], []),
        "referenced": detail.parse_json(row["referenced_context_keys"], []),
        "retrieved": detail.parse_json(row["retrieved_sessions"], []),
        "supplying": detail.parse_json(row["supplying_sessions"], []),
    }
