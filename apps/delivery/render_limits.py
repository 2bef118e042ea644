"""Resource limits of the template sandbox: a preview or a send never runs away.

Every render carries a ``RenderBudget`` (render time and output size, from the settings
``TIDINGS_RENDER_TIME_LIMIT_MS`` and ``TIDINGS_RENDER_MAX_CHARS``). Nothing grows a
string or a loop past what an email could use:

- ``range()`` holds at most ``MAX_RANGE`` numbers; every ``{% for %}`` counts its turns
  against the budget, which also watches the clock;
- ``*``, ``+`` and ``~`` refuse to build a text or list longer than ``MAX_TEXT``, and
  ``**`` a number wider than ``MAX_POWER_BITS``;
- width-like arguments (``center``, ``indent``, ``wordwrap``, ``"%9999d"``…) stop at
  ``MAX_WIDTH``; ``join`` and ``replace`` are checked for the size they would make.

Each limit raises ``RenderLimitError`` naming it; a send that hits one fails that message
permanently with the reason, and a preview answers it as an error.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from contextvars import ContextVar
from functools import wraps
from typing import Any

from jinja2 import nodes
from jinja2.runtime import markup_join, str_join
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import pass_eval_context
from jinja2.visitor import NodeTransformer

from apps.core.errors import ApplicationError

MAX_RANGE = 10_000
MAX_TEXT = 1_000_000
MAX_WIDTH = 10_000
MAX_POWER_BITS = 4_096
_CLOCK_EVERY = 64  # loop turns and calls between two looks at the clock
_PRINTF_WIDTH = re.compile(r"%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")
_FORMAT_WIDTH = re.compile(r"\{[^{}]*?:[^{}]*?(\d+)")
_FORMAT_NESTED = re.compile(r"\{[^{}]*:[^{}]*\{")  # a width taken from the arguments
_WIDTH_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})
_WIDTH_FILTERS = frozenset({"center", "indent", "wordwrap", "truncate", "batch", "slice", "filesizeformat"})


class TemplateError(ApplicationError):
    default_code = "template_error"


class RenderLimitError(TemplateError):
    default_code = "template_limit"


class RenderBudget:
    """One message's allowance: output characters and wall-clock time."""

    __slots__ = ("chars", "deadline", "limit_ms", "max_chars", "ticks")

    def __init__(self, *, limit_ms: float, max_chars: int) -> None:
        self.deadline = time.monotonic() + limit_ms / 1000
        self.limit_ms = limit_ms
        self.max_chars = max_chars
        self.chars = 0
        self.ticks = 0

    def tick(self) -> None:
        self.ticks += 1
        if not self.ticks % _CLOCK_EVERY and time.monotonic() > self.deadline:
            raise RenderLimitError(
                f"The template took longer than {self.limit_ms:.0f} ms to render.", code="template_too_slow"
            )

    def over(self) -> None:
        raise RenderLimitError(
            f"The rendered message would be longer than {self.max_chars:,} characters.",
            code="template_output_too_large",
        )


_budget: ContextVar[RenderBudget | None] = ContextVar("render_budget", default=None)


def budget_use(budget: RenderBudget) -> Any:
    return _budget.set(budget)


def budget_release(token: Any) -> None:
    _budget.reset(token)


def _tick() -> None:
    budget = _budget.get()
    if budget is not None:
        budget.tick()


def _too_long(what: str, size: int) -> None:
    if size > MAX_TEXT:
        raise RenderLimitError(
            f"The template would build {what} of {size:,} items; the limit is {MAX_TEXT:,}.",
            code="template_too_large",
        )


def _width(value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_WIDTH:
        raise RenderLimitError(f"A width of {value:,} is over the limit of {MAX_WIDTH:,}.", code="template_too_large")


def _format_widths(template: str, pattern: re.Pattern[str]) -> None:
    for match in pattern.finditer(template):
        for group in match.groups():
            if group == "*":
                raise RenderLimitError(
                    "A format width taken from the arguments is not allowed.", code="template_too_large"
                )
            if group:
                _width(int(group))


def bounded_range(*args: int) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise RenderLimitError(
            f"range() would hold {len(numbers):,} numbers; the limit is {MAX_RANGE:,}.", code="template_range_too_big"
        )
    return numbers


def _length(value: Any) -> int:
    return len(value) if isinstance(value, Sized) else 0


def _loop(iterable: Iterable[Any]) -> Iterator[Any]:
    budget = _budget.get()
    if budget is None:
        yield from iterable
        return
    for item in iterable:
        budget.tick()
        yield item


@pass_eval_context
def _concat(eval_ctx: Any, *parts: Any) -> str:
    _too_long("a text", sum(len(str(p)) for p in parts))
    return (markup_join if eval_ctx.autoescape else str_join)(parts)


class _Bounded(NodeTransformer):
    """Every loop counts its turns; every ``~`` checks the length it makes."""

    def visit_For(self, node: nodes.For) -> nodes.For:
        self.generic_visit(node)
        node.iter = nodes.Call(nodes.EnvironmentAttribute("tidings_loop"), [node.iter], [], None, None)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Call:
        self.generic_visit(node)
        return nodes.Call(nodes.EnvironmentAttribute("tidings_concat"), node.nodes, [], None, None)


def template_bound(tree: nodes.Template) -> nodes.Template:
    return _Bounded().visit(tree)


def _guard_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    injected = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0  # context or environment first

    @wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        values = args[injected:]
        if name in _WIDTH_FILTERS:
            for value in [*values[1:], *kwargs.values()]:
                _width(value)
        elif name == "format" and values and isinstance(values[0], str):
            _format_widths(values[0], _PRINTF_WIDTH)
        elif name == "replace" and len(values) >= 3:
            _replace_size(values[0], values[1], values[2])
        elif name == "join" and values and isinstance(values[0], Sized):
            separator = values[1] if len(values) > 1 else kwargs.get("d", "")
            _too_long("a text", len(str(separator)) * max(len(values[0]) - 1, 0))
        _tick()
        return func(*args, **kwargs)

    return guarded


def _replace_size(text: Any, old: Any, new: Any) -> None:
    text, old, new = str(text), str(old), str(new)
    count = text.count(old) if old else len(text) + 1
    _too_long("a text", len(text) + count * max(len(new) - len(old), 0))


class BoundedSandbox(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.globals["range"] = bounded_range
        self.globals.pop("lipsum", None)  # filler text has no place in a real message
        self.filters = {name: _guard_filter(name, func) for name, func in self.filters.items()}
        self.tidings_loop = _loop
        self.tidings_concat = _concat

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for count, other in ((left, right), (right, left)):
                if isinstance(count, int) and isinstance(other, (str, list, tuple)):
                    _too_long("a text or list", count * len(other))
        elif operator == "+" and isinstance(left, (str, list, tuple)):
            _too_long("a text or list", len(left) + _length(right))
        elif operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right > 0:
            if right * math.log2(abs(left)) > MAX_POWER_BITS:
                raise RenderLimitError(
                    f"{left} ** {right} is a number too large to render.", code="template_number_too_large"
                )
        elif operator == "%" and isinstance(left, str):
            _format_widths(left, _PRINTF_WIDTH)
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        method = getattr(__obj, "__wrapped__", __obj)  # the sandbox wraps str.format
        owner = getattr(method, "__self__", None)
        if isinstance(owner, str):
            name = getattr(method, "__name__", "")
            if name in _WIDTH_METHODS:
                for value in [*args, *kwargs.values()]:
                    _width(value)
            elif name in ("format", "format_map"):
                if _FORMAT_NESTED.search(owner):
                    raise RenderLimitError(
                        "A format width taken from the arguments is not allowed.", code="template_too_large"
                    )
                _format_widths(owner, _FORMAT_WIDTH)
            elif name == "replace" and len(args) >= 2:
                _replace_size(owner, args[0], args[1])
            elif name == "join" and args and isinstance(args[0], Sized):
                _too_long("a text", len(owner) * max(len(args[0]) - 1, 0))
        _tick()
        return super().call(__context, __obj, *args, **kwargs)
