"""Answers of known shapes, for measuring what streaming a model's text costs.

Owns `shape_text`: deterministic text of a given size in one of `SHAPES` — one long paragraph,
one fenced code block (lines, no blank lines), paragraphs (a break every 12 sentences), a long
Markdown table, and a narrow table with two right-aligned columns (the HTML fallback's worst
case). `benchmarks/bench_render.py` streams them paced through a real kernel; the real-kernel
byte tests stream them unpaced. How the bytes are counted stays with each of them.
"""

from __future__ import annotations

WORDS = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
]
GOAL_SHAPES = ("one long paragraph", "one code block", "paragraphs", "a long Markdown table")
# Beyond the goal's shapes: short cells and two right-aligned columns, the HTML fallback's worst
# case (per row `<tr>`, per cell `<td>`, per aligned cell ` align=right`).
SHAPES = (*GOAL_SHAPES, "a narrow right-aligned table")


def _sentences(n: int) -> str:
    words = " ".join(WORDS[(n + i) % len(WORDS)] for i in range(11))
    return f"Sentence {n:05d} says {words}."


def shape_text(shape: str, size: int) -> str:
    """About `size` characters of answer text in `shape` (one of `SHAPES`)."""
    parts: list[str] = []
    n, total = 0, 0
    while total < size:
        n += 1
        if shape == "one long paragraph":
            part = _sentences(n) + " "
        elif shape == "paragraphs":
            part = _sentences(n) + ("\n\n" if n % 12 == 0 else " ")
        elif shape == "one code block":
            part = (
                f"    total_{n:05d} = compute(values[{n}], {WORDS[n % len(WORDS)]!r}) + offset  # step {n}\n"
            )
        elif shape == "a narrow right-aligned table":
            part = f"| {n:05d} | {WORDS[n % len(WORDS)][:5]} | {n * 37 % 1000} | {n % 9} |\n"
        else:  # a long Markdown table
            part = f"| {n:05d} | {WORDS[n % len(WORDS)]} | {n * 37 % 1000:>4} | {WORDS[(n * 5) % len(WORDS)]} row |\n"
        parts.append(part)
        total += len(part)
    body = "".join(parts)
    if shape == "one code block":
        return "```python\n" + body[: size - 20] + "\n```"
    if shape == "a long Markdown table":
        return (
            "| id | word | value | note |\n|---|---|---|---|\n" + body[: size - 60].rsplit("\n", 1)[0] + "\n"
        )
    if shape == "a narrow right-aligned table":
        return "| id | w | v | k |\n|---|---|--:|--:|\n" + body[: size - 60].rsplit("\n", 1)[0] + "\n"
    return body[:size].rstrip() + "."
