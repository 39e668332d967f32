"""Passes, their options, the registry and the pipeline string (the rest of the package's
text is in ``bladec/passes/__init__.py``): each pass module registers itself here."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Protocol, Union

from bladec.errors import BladecError
from bladec.ir import Module


@dataclass(frozen=True)
class IntOption:
    """An integer option of a pass: its default and its valid range (``high`` None: any)."""
    default: int
    low: int
    high: int | None = None
    help: str = ""

    def describe(self, key: str) -> str:
        top = str(self.high) if self.high is not None else "inf"
        return f"{key}=N ({self.help + ', ' if self.help else ''}N in [{self.low}, {top}], " \
               f"default {self.default})"

    def parse(self, pass_name: str, key: str, text: str) -> int:
        """The option's value from its text, or a BladecError naming the valid range."""
        try:
            value = int(text.strip())
        except ValueError:
            value = None
        if value is None or value < self.low or (self.high is not None and value > self.high):
            raise BladecError(f"bad option {key}={text} for pass '{pass_name}': expected "
                              f"{self.describe(key)}")
        return value


    def brief(self) -> str:
        return f"N in {self.low}..{self.high if self.high is not None else 'inf'} " \
               f"(default {self.default})"


@dataclass(frozen=True)
class ChoiceOption:
    """An option that takes one of a few words (``save=all``)."""
    default: str
    choices: tuple[str, ...]
    help: str = ""

    def describe(self, key: str) -> str:
        return f"{key}={'|'.join(self.choices)} ({self.help + ', ' if self.help else ''}" \
               f"default {self.default})"

    def brief(self) -> str:
        return f"{'|'.join(self.choices)} (default {self.default})"

    def parse(self, pass_name: str, key: str, text: str) -> str:
        if text.strip() not in self.choices:
            raise BladecError(f"bad option {key}={text} for pass '{pass_name}': expected "
                              f"{self.describe(key)}")
        return text.strip()


@dataclass(frozen=True)
class NamesOption:
    """A list of value names (``wrt=%w1,%w2``): the items after ``key=`` that have no
    ``=`` of their own continue the list, so the pipeline string needs no other quoting.
    Whether each name exists is for the pass to say, where it sees the listing."""
    help: str = ""
    words: tuple[str, ...] = ()   # single words it also takes instead of names

    def describe(self, key: str) -> str:
        alt = "".join(f"|{w}" for w in self.words)
        return f"{key}=%a,%b,...{alt} ({self.help + ', ' if self.help else ''}" \
               f"default: see the pass)"

    def brief(self) -> str:
        return "%a,%b,..." + "".join(f"|{w}" for w in self.words)

    def parse(self, pass_name: str, key: str, text: str) -> tuple[str, ...]:
        if text.strip() in self.words:
            return (text.strip(),)
        names = tuple(n.strip() for n in text.split(",") if n.strip())
        bad = [n for n in names if not re.fullmatch(r"%[A-Za-z0-9_.$]+", n)]
        if bad or not names:
            raise BladecError(f"bad option {key}={text} for pass '{pass_name}': expected "
                              f"{self.describe(key)}")
        return names


@dataclass(frozen=True)
class SymbolsOption:
    """A list of symbols (``pad=S0,S1``; the ``@`` is optional), continued over the
    items without ``=`` as :class:`NamesOption` is."""
    help: str = ""

    def describe(self, key: str) -> str:
        return f"{key}=S0,S1,... ({self.help + ', ' if self.help else ''}default: see the pass)"

    def brief(self) -> str:
        return "S0,S1,..."

    def parse(self, pass_name: str, key: str, text: str) -> tuple[str, ...]:
        names = tuple(n.strip().lstrip("@") for n in text.split(",") if n.strip())
        bad = [n for n in names if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n)]
        if bad or not names:
            raise BladecError(f"bad option {key}={text} for pass '{pass_name}': expected "
                              f"{self.describe(key)}")
        return names


Option = Union[IntOption, ChoiceOption, NamesOption, SymbolsOption]


class Pass(Protocol):
    name: ClassVar[str]
    options: ClassVar[dict[str, Option]]
    discards: ClassVar[dict[str, str]]

    def apply(self, module: Module) -> Module: ...


PASSES: dict[str, Callable[..., Pass]] = {}
DEFAULT_PIPELINE = "analyze,schedule,remat"
_ITEM = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(?:\{([^{}]*)\})?\s*(?:,|$)")


def register(cls: type) -> type:
    """Add a pass class to the registry; it gets empty ``options``/``discards`` if it has none."""
    cls.options = dict(getattr(cls, "options", {}))
    cls.discards = dict(getattr(cls, "discards", {}))
    PASSES[cls.name] = cls
    return cls


def describe_options(name: str) -> str:
    """A pass's options as the pipeline string spells them, for messages and help."""
    options = PASSES[name].options
    if not options:
        return f"'{name}' takes no options"
    return f"'{name}' options: " + "; ".join(o.describe(k) for k, o in options.items())


def passes_help() -> str:
    """Every pass with its options and their ranges, for ``--help``."""
    def one(name: str) -> str:
        opts = PASSES[name].options
        if not opts:
            return name
        inner = ",".join(f"{k}={o.brief()}" for k, o in opts.items())
        return f"{name}{{{inner}}}"
    return "; ".join(one(n) for n in sorted(PASSES))


def parse_options(name: str, text: str | None) -> dict[str, Any]:
    """``key=value,k2=v2`` for pass ``name``, checked against its option schema; a list
    option's value runs on over the items without ``=`` (``wrt=%a,%b``)."""
    schema = PASSES[name].options
    out: dict[str, Any] = {}
    items: list[str] = []
    for item in filter(None, (o.strip() for o in (text or "").split(","))):
        if "=" not in item and items and isinstance(
                schema.get(items[-1].partition("=")[0].strip().replace("-", "_")),
                (NamesOption, SymbolsOption)):
            items[-1] += "," + item
        else:
            items.append(item)
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq:
            raise BladecError(f"pass option '{item}' of '{name}' must be key=value "
                              f"({describe_options(name)})")
        if key not in schema:
            raise BladecError(f"unknown option '{key}' for pass '{name}' "
                              f"({describe_options(name)})")
        if key in out:
            raise BladecError(f"option '{key}' given twice for pass '{name}'")
        out[key] = schema[key].parse(name, key, value)
    return out


def parse_pipeline(text: str) -> list[Pass]:
    """``a,b{key=value,k2=v2}`` to pass instances; ``none`` is the empty pipeline.

    Every error (syntax, unknown pass, bad option, an order in which a pass undoes an
    earlier one) is a BladecError, raised before any pass runs."""
    if text.strip() in ("", "none"):
        return []
    passes: list[Pass] = []
    pos = 0
    while pos < len(text):
        m = _ITEM.match(text, pos)
        if not m or m.end() == pos:
            raise BladecError(f"bad pipeline '{text}' at character {pos + 1}")
        name, opts = m.group(1), m.group(2)
        if name not in PASSES:
            raise BladecError(f"unknown pass '{name}' (known: {', '.join(sorted(PASSES))})")
        for earlier in passes:
            why = PASSES[name].discards.get(earlier.name)
            if why:
                raise BladecError(f"pipeline '{text}': '{name}' after '{earlier.name}' {why}; "
                                  f"put '{earlier.name}' after '{name}'")
        passes.append(PASSES[name](**parse_options(name, opts)))
        pos = m.end()
    return passes


def run_pipeline(module: Module, passes: list[Pass]) -> Module:
    for p in passes:
        module = p.apply(module)
    return module

