"""Summaries of torch tensors.

Owns what `inspect_variables` says about a tensor: shape, dtype, device, memory, statistics of a
fixed-size sample beyond the element budget (for dense floating tensors), and torch's own
elided repr. torch is used only if the user already imported it.
"""

from __future__ import annotations

import sys
from typing import Any

from .summary_pandas import ROW_BUDGET, sample_positions
from .summary_text import Budget, Family, bounded_repr, count, human_bytes


def _is_tensor(value: object) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _bytes(tensor: Any) -> int:
    return int(tensor.element_size() * tensor.numel())


def _listing(tensor: Any) -> tuple[str, str, str]:
    shape = "×".join(str(n) for n in tensor.shape) or "scalar"
    return "torch.Tensor", shape, human_bytes(_bytes(tensor))


def _statistics(tensor: Any) -> str | None:
    torch = sys.modules["torch"]
    if not (tensor.is_floating_point() and tensor.layout == torch.strided and tensor.numel()):
        return None
    if tensor.device.type == "meta":
        return None
    values = tensor.detach()
    numpy: Any = sys.modules.get("numpy")  # sampling needs it; never imported here
    if numpy is None and values.numel() > ROW_BUDGET:
        return None
    positions = sample_positions(values.numel(), ROW_BUDGET)
    if positions is not None:  # index each dimension: no flattening copy, contiguous or not
        indices = numpy.unravel_index(positions, tuple(values.shape))
        values = values[tuple(torch.as_tensor(index, device=values.device) for index in indices)]
    values = values.float()
    finite = values[~torch.isnan(values)]
    note = "" if positions is None else f" (from a {count(len(positions))}-element sample)"
    if not finite.numel():
        return "all values are nan" + note
    return (
        f"min {finite.min().item():.6g}, max {finite.max().item():.6g}, mean {finite.mean().item():.6g}, "
        f"std {finite.std().item() if finite.numel() > 1 else 0.0:.6g}, "
        f"nan {values.numel() - finite.numel()}{note}"
    )


def _summary(name: str, tensor: Any, budget: Budget) -> str:
    lines = [
        f"{name}: torch Tensor, shape {tuple(tensor.shape)}, dtype {tensor.dtype}, device {tensor.device}, "
        f"{human_bytes(_bytes(tensor))}" + (", requires_grad" if tensor.requires_grad else "")
    ]
    if budget.allows("statistics"):
        stats = _statistics(tensor)
        if stats:
            lines.append(stats)
    if tensor.device.type != "meta":
        lines.append(bounded_repr(tensor, 800))  # torch elides large tensors itself
    return "\n".join(lines)


FAMILIES = [Family(_is_tensor, _listing, _summary)]
