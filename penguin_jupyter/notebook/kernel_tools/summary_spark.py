"""Summaries of pyspark DataFrames (classic and Spark Connect), running no Spark job.

Owns what `inspect_variables` says about a Spark DataFrame: its schema (plan metadata, no job).
Row counts, statistics and rows all need a job on the cluster, so the summary names the calls
that would run one instead of running them. pyspark is used only if the user already imported it.
"""

from __future__ import annotations

import sys
from typing import Any

from .summary_pandas import MAX_COLUMNS
from .summary_text import Budget, Family


def _is_spark_frame(value: object) -> bool:
    classes = []
    for module_name in (
        "pyspark.sql.dataframe",
        "pyspark.sql.connect.dataframe",
        "pyspark.sql.classic.dataframe",
    ):
        module = sys.modules.get(module_name)
        frame = getattr(module, "DataFrame", None) if module is not None else None
        if isinstance(frame, type):
            classes.append(frame)
    return any(isinstance(value, cls) for cls in classes)


def _listing(df: Any) -> tuple[str, str, str]:
    return "spark.DataFrame", f"?×{len(df.schema.fields)} (lazy)", "not computed"


def _summary(name: str, df: Any, budget: Budget) -> str:
    fields = df.schema.fields
    lines = [f"{name}: Spark DataFrame (lazy), {len(fields)} columns; no Spark job was run"]
    lines.append("columns (type, nullable):")
    for field in fields[:MAX_COLUMNS]:
        lines.append(
            f"  {field.name}: {field.dataType.simpleString()}, {'nullable' if field.nullable else 'not null'}"
        )
    if len(fields) > MAX_COLUMNS:
        lines.append(f"  … {len(fields) - MAX_COLUMNS} more columns")
    lines.append(
        f"Not computed: row count, statistics and rows. To get them (each runs a Spark job): "
        f"`{name}.count()`, `{name}.limit(5).toPandas()`, `{name}.describe().toPandas()`."
    )
    return "\n".join(lines)


FAMILIES = [Family(_is_spark_frame, _listing, _summary, True, "Spark, lazy")]
