"""The scripted session behind `examples/dask-cluster.ipynb`, in three turns.

Owns the model side of that notebook: inspect the user's Dask DataFrame `orders` (2,000,000
generated orders in 8 partitions on a local dask.distributed cluster; the summary computes
nothing), total units and revenue per region with one `groupby` that runs on the cluster through
`run_python` (only the 4-row result comes back), then answer. The numbers in the answer are those
of the notebook's generated data. Starting the server and the notebook itself are the callers' job.
"""

from __future__ import annotations

from typing import Any

REVENUE_CODE = """\
revenue = (
    orders.assign(revenue=orders.units * orders.price)
    .groupby("region")[["units", "revenue"]]
    .sum()
    .compute()  # runs on the cluster; only the per-region totals come back
    .sort_values("revenue", ascending=False)
)
revenue"""

ANSWER = """\
`orders` is a **Dask DataFrame** on your local cluster: 4 columns (`order_id`, `region`, `units`,
`price`) in 8 partitions. I did not pull it into the kernel: the summary read only its metadata,
and the `groupby` ran on the cluster, so just the 4-row result came back.

| region | units | revenue |
|---|---|---|
| North | 7,999,980 | 123,999,759 |
| South | 6,000,027 | 92,999,832 |
| East | 4,000,000 | 61,999,890 |
| West | 1,999,987 | 30,999,444 |

- **North** brings 40% of the revenue; **West** only 10%.
- The average price per unit is the same everywhere (about 15.5), so the regions differ by
  volume, not by price.

The table is in `revenue` (a small pandas DataFrame) if you want to plot it.
"""


def dask_entries() -> list[dict[str, Any]]:
    """The three scripted turns of `examples/dask-cluster.ipynb` (ScriptedModelServer entries)."""
    return [
        {
            "reasoning": "orders may be large and lives on a cluster; its summary reads metadata only.",
            "text": "Let me look at `orders` first.",
            "tool_calls": [
                {
                    "name": "inspect_variables",
                    "id": "call_dask_inspect",
                    "arguments": {"description": "Summarise the orders Dask DataFrame", "names": ["orders"]},
                }
            ],
            "usage": {"prompt_tokens": 2600, "completion_tokens": 40},
            "delay_ms": 20,
        },
        {
            "reasoning": "Nothing was computed. A groupby on the cluster gives per-region totals; "
            "only that small result should come back.",
            "tool_calls": [
                {
                    "name": "run_python",
                    "id": "call_dask_groupby",
                    "arguments": {"description": "Units and revenue per region", "code": REVENUE_CODE},
                }
            ],
            "usage": {"prompt_tokens": 3100, "completion_tokens": 90, "cached_tokens": 2600},
            "delay_ms": 20,
        },
        {
            "text": ANSWER,
            "usage": {"prompt_tokens": 3500, "completion_tokens": 230, "cached_tokens": 3100},
            "delay_ms": 10,
            "chunk": 16,
        },
    ]
