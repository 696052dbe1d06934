"""Source database assets: one SQLite file each, embedded builder or real-data adapter."""

import dagster as dg

from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.lib.paths import source_db_path
from memsql_assets.lib.sources.build import build_source
from memsql_assets.lib.sources.config import SOURCE_NAMES

DESCRIPTIONS = {
    "bird_financial": "BIRD financial (PKDD'99 Czech bank): account, card, client, disp, district, loan, order, trans.",
    "sec_edgar": "SEC EDGAR annual financials: companies + annual_financials(ticker, fiscal_year, metric, value_billions).",
    "northwind": "Northwind (extended): Customers, Orders, [Order Details], Products, Categories, Employees, ….",
}


def _source_asset(name: str) -> dg.AssetsDefinition:
    @dg.asset(
        name=name,
        group_name="sources",
        kinds={"sqlite"},
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


source_assets = [_source_asset(name) for name in SOURCE_NAMES]
