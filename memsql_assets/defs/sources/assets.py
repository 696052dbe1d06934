"""Source database assets: one SQLite file each, embedded builder or real-data adapter.

Each source's configuration (sources/sources.yaml plus MEMSQL_SOURCE_<NAME>, and the real files it
names) is observed as `raw_<name>`: a changed setting or file is a new data version there, and Dagster
marks the database built from it stale.
"""

import dagster as dg

from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.lib.code_versions import SOURCE_GUIDANCE_CODE, SOURCES_CODE, code_version, digest
from memsql_assets.lib.paths import source_db_path
from memsql_assets.lib.sources.build import build_source
from memsql_assets.lib.sources.config import SOURCE_NAMES, SourceSpec
from memsql_assets.lib.sources.wide import VARIANTS

DESCRIPTIONS = {
    "bird_financial": "BIRD financial (PKDD'99 Czech bank): account, card, client, disp, district, loan, order, trans.",
    "sec_edgar": "SEC EDGAR annual financials: companies + annual_financials(ticker, fiscal_year, metric, value_billions).",
    "northwind": "Northwind (extended): Customers, Orders, [Order Details], Products, Categories, Employees, ….",
}


def spec_version(spec: SourceSpec) -> str:
    """The configuration a source is built from, with the identity (size, mtime) of each real file
    (the variant only where it is not the standard one, so a standard build's version stays)."""
    variant = {"variant": spec.variant} if spec.variant != VARIANTS[0] else {}
    if spec.kind != "real" or spec.real_path is None:
        return digest({"kind": spec.kind, "seed": spec.seed, "options": spec.options, **variant})
    root = spec.real_path
    paths = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
    files = [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in paths]
    return digest({"kind": spec.kind, "options": spec.options, "files": files, **variant})


def raw_key(name: str) -> dg.AssetKey:
    return dg.AssetKey(f"raw_{name}")


def _raw_asset(name: str) -> dg.AssetsDefinition:
    @dg.observable_source_asset(
        key=raw_key(name),
        group_name="sources",
        description=f"What {name} is built from: its entry in sources/sources.yaml (or MEMSQL_SOURCE_"
        f"{name.upper()}) and the real files it names. Observed by `memsql run` and the registry sensor.",
    )
    def _observe(memsql: MemsqlSettings) -> dg.DataVersion:
        return dg.DataVersion(spec_version(memsql.source_specs()[name]))

    return _observe


def _source_asset(name: str) -> dg.AssetsDefinition:
    @dg.asset(
        name=name,
        group_name="sources",
        kinds={"sqlite"},
        deps=[raw_key(name)],
        code_version=code_version(*SOURCES_CODE, exclude=(SOURCE_GUIDANCE_CODE,)),
        description=DESCRIPTIONS[name]
        + " Built per sources/sources.yaml (embedded by default, or a real-data adapter).",
    )
    def _asset(context: dg.AssetExecutionContext, memsql: MemsqlSettings) -> dg.MaterializeResult:
        spec = memsql.source_specs()[name]
        built = build_source(spec, source_db_path(memsql.home_path, name))
        context.log.info(
            f"built {name} ({built.kind}) at {built.path}: {sum(built.row_counts.values()):,} rows"
        )
        counts_md = "| table | rows |\n| --- | ---: |\n" + "".join(
            f"| {t} | {n:,} |\n" for t, n in sorted(built.row_counts.items())
        )
        return dg.MaterializeResult(
            metadata={
                "kind": built.kind,
                "synthetic": built.synthetic,
                "path": dg.MetadataValue.path(str(built.path)),
                "content_hash": built.content_hash,
                "total_rows": sum(built.row_counts.values()),
                "row_counts": dg.MetadataValue.md(counts_md),
                "inputs": dg.MetadataValue.json(built.meta.get("inputs", [])),
            },
            data_version=dg.DataVersion(built.content_hash),
        )

    return _asset


raw_source_assets = [_raw_asset(name) for name in SOURCE_NAMES]
source_assets = [_source_asset(name) for name in SOURCE_NAMES]
