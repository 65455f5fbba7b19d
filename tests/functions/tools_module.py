"""Function tools the run tests use, importable by module path (as Ray workers need)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Literal

import toolrelay

SAVED: list[str] = []
"""What ``save_note`` saved (a test clears it): proof that the function ran, or did not."""


@dataclasses.dataclass
class Weather:
    city: str
    degrees: float
    unit: Literal["C", "F"]


@toolrelay.tool(read_only=True)
def get_weather(city: str, unit: Literal["C", "F"] = "C") -> Weather:
    """The weather now in a city.

    Args:
        city: The city's name.
        unit: Celsius or Fahrenheit.
    """
    return Weather(city, 21.5 if unit == "C" else 70.7, unit)


@toolrelay.tool
async def save_note(text: str, tags: list[str] | None = None) -> str:
    """Save a note.

    Args:
        text: The note.
        tags: Words to find it by.
    """
    await asyncio.sleep(0)
    SAVED.append(text)
    return f"saved {text!r} with {len(tags or [])} tag(s)"


@toolrelay.tool(read_only=True)
def divide(a: float, b: float) -> float:
    """a / b."""
    return a / b


@toolrelay.tool(read_only=True)
def refuse(reason: str) -> str:
    """Fails on purpose."""
    raise toolrelay.ToolError(f"not today: {reason}")


@toolrelay.tool(read_only=True)
async def chatty(steps: int, ctx: toolrelay.ToolContext) -> dict[str, object]:
    """Reports progress and logs; asks the user for a name."""
    for step in range(steps):
        ctx.progress(step + 1, steps, f"step {step + 1}")
    ctx.log("info", {"steps": steps})
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}},
                                            "required": ["name"]})
    return {"call_id": ctx.call_id, "mcp_id": ctx.mcp_id, "name": answer["name"]}


def plain_add(a: int, b: int) -> int:
    """Add two numbers (a plain function: declared as toolrelay.tool would)."""
    return a + b
