"""Waiting in Pilot tests that drive a real program: poll a condition, never sleep a fixed time, and fail when the
condition never holds.

A wait that gave up quietly let a test go on after its timeout: a condition that could never hold (a check of a
widget's ``str()`` instead of its text) turned into a fixed 30-second sleep, and the test still passed on what came
after. `until` fails the test instead, naming the condition it waited for.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

from fake_app import settle


def _described(condition: Callable[[], Any]) -> str:
    try:
        return inspect.getsource(condition).strip()
    except (OSError, TypeError):
        return repr(condition)


async def until(pilot: Any, condition: Callable[[], Any], timeout: float = 120.0, *,
                poll: Callable[[], Awaitable[Any]]) -> None:
    """Await `poll()` until `condition()` is true, then let the app settle (`fake_app.settle`).

    Raises:
        AssertionError: `condition` was still false after `timeout` seconds (its source line in the message).
    """
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start >= timeout:
            raise AssertionError(f"waited {timeout:g} s for a condition that never held: {_described(condition)}")
        await poll()
    await settle(pilot)
