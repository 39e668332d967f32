"""How a call's arguments meet the traced function: static arguments, keywords, owners.

``jax.jit`` users pass arguments by position or by name, mark some *static* (Python
values that pick a trace, hashed into its key: a layer count, a flag, a string) by
``static_argnums``/``static_argnames``, and name parameters in ``donate_argnums`` and
bladec's ``dynamic``. :class:`Signature` turns one call into a :class:`Call`: the
*traced* arguments (arrays and numbers, as a tuple whose last item is a dict of the
ones passed by keyword, when there are any), a hashable key of the static ones, and
the function of the traced arguments alone that the importer traces. Each leaf of the
traced arguments has an *owner*: the parameter it was passed as (its name, or its
position where the function takes ``*args``), which is what ``dynamic`` and donation
speak of, by name or by position alike.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from bladec.errors import BladecError

Owner = str | int


@dataclass(frozen=True)
class Call:
    """One call, split: what is traced, what picks the trace, how to call the function."""
    args: tuple                  # the traced arguments (a dict of keywords last, if any)
    names: tuple[str, ...]       # the importer's name of each ('' for the keywords)
    owners: tuple[Owner, ...]    # the parameter each positional traced argument was
    static: tuple                # a hashable key of the static arguments
    fn: Callable                 # fn(*args) calls the user's function with the statics

    @property
    def keywords(self) -> bool:
        return len(self.names) > 0 and self.names[-1] == ""

    def leaf_owner(self, path: tuple) -> Owner:
        """The parameter a leaf (by its path in :attr:`args`) belongs to."""
        i = path[0].idx
        if self.keywords and i == len(self.args) - 1:
            return str(path[1].key)
        return self.owners[i]


class Signature:
    """The parameters of ``fn`` and which are static: where only positions or only
    names are given, each gives the other, as ``jax.jit`` infers them."""

    def __init__(self, fn: Callable, static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = ()) -> None:
        self.fn = fn
        name = getattr(fn, "__name__", "fn")
        try:
            self.sig: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            self.sig = None
        params = list(self.sig.parameters.values()) if self.sig else []
        self.positional = [p.name for p in params
                           if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.names = [p.name for p in params
                      if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        self.var_keywords = any(p.kind == p.VAR_KEYWORD for p in params)
        self.var_positional = any(p.kind == p.VAR_POSITIONAL for p in params)
        nums = _ints("static_argnums", static_argnums)
        names = {static_argnames} if isinstance(static_argnames, str) \
            else set(static_argnames or ())
        for n in names:
            if not isinstance(n, str) or not n.isidentifier():
                raise BladecError(f"static_argnames must be parameter names, not {n!r}")
            if self.sig is not None and n not in self.names and not self.var_keywords:
                raise BladecError(f"static_argnames names '{n}', which is not a parameter "
                                  f"of {name} (parameters: {', '.join(self.names) or 'none'})")
        if self.sig is not None and not self.var_positional:
            bad = sorted(i for i in nums if i >= len(self.positional))
            if bad:
                raise BladecError(f"static_argnums {bad} out of range: {name} takes "
                                  f"{len(self.positional)} positional argument(s)")
        if not names:
            names = {self.positional[i] for i in nums if i < len(self.positional)}
        elif not nums:
            nums = {self.positional.index(n) for n in names if n in self.positional}
        self.static_nums, self.static_names = nums, names

    def owner(self, key: Owner) -> Owner:
        """A parameter given by name or position, as an owner (a name where it has one)."""
        if isinstance(key, int) and not isinstance(key, bool):
            return self.positional[key] if 0 <= key < len(self.positional) else key
        return key

    def known(self, key: str) -> bool:
        return self.sig is None or key in self.names or self.var_keywords

    def split(self, args: tuple, kwargs: dict) -> Call:
        """The call as traced arguments, a static key and the function to trace."""
        name = getattr(self.fn, "__name__", "fn")
        if self.sig is not None:
            try:
                bound = self.sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise BladecError(f"{name}: {exc}") from None
            args, kwargs = tuple(bound.args), dict(bound.kwargs)
        static: list[tuple[Owner, Any]] = []
        traced, owners = [], []
        statics = {i for i in range(len(args)) if i in self.static_nums or
                   (i < len(self.positional) and self.positional[i] in self.static_names)}
        for i, a in enumerate(args):
            if i in statics:
                static.append((i, _hashable(a, self.owner(i), name)))
            else:
                traced.append(a)
                owners.append(self.owner(i))
        static_kw = self.static_names | {self.positional[i] for i in self.static_nums
                                         if i < len(self.positional)}
        fixed = {k: _hashable(v, k, name) for k, v in kwargs.items() if k in static_kw}
        given = {k: v for k, v in kwargs.items() if k not in static_kw}
        static.extend(sorted(fixed.items()))
        n = len(traced)
        positions = [i for i in range(len(args)) if i not in statics]
        fixed_args = {i: v for i, v in static if isinstance(i, int)}
        fn = self.fn

        def call(*xs: Any) -> Any:
            full = list(args)
            for i, x in zip(positions, xs[:n]):
                full[i] = x
            for i, v in fixed_args.items():
                full[i] = v
            keywords = dict(xs[n]) if len(xs) > n else {}
            return fn(*full, **keywords, **fixed)

        call.__name__ = call.__qualname__ = name   # for the importer's messages
        names = [str(o) if isinstance(o, str) else f"arg{o}" for o in owners]
        if given:
            traced.append(given)
            names.append("")
        return Call(tuple(traced), tuple(names), tuple(owners), tuple(static), call)


def _ints(what: str, value: int | Sequence[int]) -> set[int]:
    items = [value] if isinstance(value, int) else list(value or ())
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in items):
        raise BladecError(f"{what} must be argument positions (non-negative integers), "
                          f"not {value!r}")
    return set(items)


def _hashable(value: Any, owner: Owner, fn: str) -> Any:
    """A static argument as it keys a trace: hashed as ``jax.jit`` hashes it."""
    try:
        hash(value)
    except TypeError:
        what = f"'{owner}'" if isinstance(owner, str) else f"{owner}"
        raise BladecError(f"{fn}: static argument {what} is a {type(value).__name__}, "
                          f"which is not hashable (pass a tuple, or make it a traced "
                          f"argument)") from None
    return value
