"""Realistic analysis notebooks of any length, as a frontend's bridge or the saved file hands them over.

Owns `analysis_cells(n)`: the cells (index, JupyterLab-style UUID id, type, source, outputs) of
an exploration notebook — markdown notes, loading and cleaning code, `head()` tables (HTML and
plain), `describe()`, prints, plots (PNG), an occasional error and `%%penguin` cells with their
transcript — and `write_notebook` to save them as .ipynb. Used by the read_notebook tests and
benchmarks/bench_notebook_context.py.
"""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path
from typing import Any

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 80).decode()  # ~27 KB, like a small plot
TABLE_PLAIN = "\n".join(
    ["         date  region  revenue  units"]
    + [f"{i}  2024-0{i % 9 + 1}-01  north  {1200 + 37 * i:7.1f}  {40 + i}" for i in range(5)]
)
TABLE_HTML = "<table><thead><tr><th>date</th><th>region</th><th>revenue</th></tr></thead><tbody>" + "".join(
    f"<tr><td>2024-0{i % 9 + 1}-01</td><td>north</td><td>{1200 + 37 * i}</td></tr>" for i in range(5)
) + "</tbody></table>"


def _out(kind: str, **data: Any) -> dict[str, Any]:
    return {"output_type": kind, **data}


def _cell(i: int) -> tuple[str, str, list[dict[str, Any]]]:
    """(type, source, outputs) of the i-th cell: a repeating pattern of twelve kinds."""
    step = i % 12
    name = f"frame_{i}"
    if step == 0:
        return "markdown", f"## Step {i // 12 + 1}: load and clean\nThe data comes from `sales_{i}.csv`; dates are parsed, duplicates dropped.", []
    if step == 1:
        return "code", f"import pandas as pd\n{name} = pd.read_csv('sales_{i}.csv', parse_dates=['date'])\n{name} = {name}.drop_duplicates()\nprint({name}.shape)", [_out("stream", name="stdout", text="(48213, 7)\n")]
    if step == 2:
        return "code", f"{name}.head()", [_out("execute_result", execution_count=i, metadata={}, data={"text/plain": TABLE_PLAIN, "text/html": TABLE_HTML})]
    if step == 3:
        return "code", f"{name}.describe()", [_out("execute_result", execution_count=i, metadata={}, data={"text/plain": TABLE_PLAIN * 2, "text/html": TABLE_HTML * 2})]
    if step == 4:
        return "code", f"monthly = {name}.set_index('date').resample('MS')['revenue'].sum()\nax = monthly.plot(title='Monthly revenue')\nax.set_ylabel('EUR')", [_out("display_data", metadata={}, data={"image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>"})]
    if step == 5:
        return "markdown", "Revenue dips every August; check whether the north region drives it.", []
    if step == 6:
        return "code", f"by_region = {name}.groupby('region')['revenue'].agg(['mean', 'sum', 'count'])\nby_region", [_out("execute_result", execution_count=i, metadata={}, data={"text/plain": TABLE_PLAIN, "text/html": TABLE_HTML})]
    if step == 7:
        return "code", f"for region, part in {name}.groupby('region'):\n    print(region, len(part), part['revenue'].mean().round(1))", [_out("stream", name="stdout", text="".join(f"region_{r} {900 + r} {1234.5 + r}\n" for r in range(12)))]
    if step == 8:
        tb = [f"\x1b[0;31m---> {n} frame line in cell\x1b[0m" for n in range(20)]
        return "code", f"{name}['margin'] = {name}['profit'] / {name}['revenue']", [_out("error", ename="KeyError", evalue="'profit'", traceback=tb)]
    if step == 9:
        transcript = {"application/vnd.penguin.transcript+json": {"status": "completed", "messages": []}, "text/html": "<div>" + "transcript " * 400 + "</div>", "text/plain": "penguin: completed"}
        return "code", f"%%penguin\nWhy does revenue dip in August in {name}? Plot it by region.", [_out("display_data", metadata={}, data=transcript)]
    if step == 10:
        return "code", f"{name}.info()", [_out("stream", name="stdout", text="<class 'pandas.core.frame.DataFrame'>\n" + "".join(f" {c}  col_{c}  48213 non-null  float64\n" for c in range(7)))]
    return "code", f"corr = {name}.select_dtypes('number').corr()\ncorr.style.background_gradient()", [_out("execute_result", execution_count=i, metadata={}, data={"text/plain": "<pandas.io.formats.style.Styler>", "text/html": "<style></style>" + TABLE_HTML * 3})]


def analysis_cells(count: int, *, seed: int = 31) -> list[dict[str, Any]]:
    """`count` cells as the bridge hands them over (index and id added; the last one is a %%penguin cell)."""
    rng = uuid.UUID(int=seed)
    cells = []
    for i in range(count):
        kind, source, outputs = _cell(i)
        cell_id = str(uuid.uuid5(rng, str(i)))
        cell: dict[str, Any] = {"index": i, "id": cell_id, "cell_type": kind, "source": source}
        if kind == "code":
            cell["execution_count"] = i + 1
            cell["outputs"] = outputs
        cells.append(cell)
    last = cells[-1]
    last.update(cell_type="code", source="%%penguin\nSummarize what this notebook found so far.", outputs=[], execution_count=None)
    return cells


def write_notebook(path: Path, cells: list[dict[str, Any]]) -> Path:
    """`cells` saved as an nbformat 4.5 notebook (index dropped)."""
    saved = [{k: v for k, v in c.items() if k != "index"} | {"metadata": {}} for c in cells]
    for cell in saved:
        if cell["cell_type"] == "code":
            cell.setdefault("outputs", [])
            cell.setdefault("execution_count", None)
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": saved}
    path.write_text(json.dumps(nb))
    return path
