"""Parser speed: lines per second of `bladec.parse.parse_module`, and of parse + print.

The input is a generated listing shaped like a transformer training graph with symbolic
batch (@S0) and sequence (@S1): mostly elementwise ops, then reshapes, dot_general with
its dimension attributes, broadcast_in_dim with dims, reductions with dims and kind,
transposes, converts and constants; about a quarter of the op lines carry an attribute
dict, and there is the odd comment line. Each figure is the best of several runs, by the
wall clock and by the process's CPU time (the fair one on a shared machine).

    python benchmarks/bench_parse.py [--lines 100000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bladec.parse import parse_module  # noqa: E402
from bladec.printer import format_module  # noqa: E402

HIDDEN, HEADS, HEAD_DIM, MLP = 4096, 32, 128, 11008

# Shapes of the graph, as (type text, rank); every value gets one of these.
ACT = f"tensor<?x?x{HIDDEN}xbf16, [@S0, @S1, @C{HIDDEN}]>"
TOK = f"tensor<?x{HIDDEN}xbf16, [@S2, @C{HIDDEN}]>"
MLPT = f"tensor<?x{MLP}xbf16, [@S2, @C{MLP}]>"
HEADT = f"tensor<?x{HEADS}x?x{HEAD_DIM}xbf16, [@S0, @C{HEADS}, @S1, @C{HEAD_DIM}]>"
SCORE = f"tensor<?x{HEADS}x?x?xbf16, [@S0, @C{HEADS}, @S1, @S1]>"
ROWS = f"tensor<?x{HEADS}x?xbf16, [@S0, @C{HEADS}, @S1]>"
ACT32 = f"tensor<?x?x{HIDDEN}, [@S0, @S1, @C{HIDDEN}]>"
SPLIT = f"tensor<?x?x{HEADS}x{HEAD_DIM}xbf16, [@S0, @S1, @C{HEADS}, @C{HEAD_DIM}]>"
WEIGHT = f"tensor<{HIDDEN}x{HIDDEN}xbf16>"
WMLP = f"tensor<{HIDDEN}x{MLP}xbf16>"
SHAPES = {"act": ACT, "tok": TOK, "mlp": MLPT, "head": HEADT, "split": SPLIT, "score": SCORE,
          "rows": ROWS, "act32": ACT32, "weight": WEIGHT, "wmlp": WMLP}
UNARY = ["exp", "tanh", "rsqrt", "logistic", "neg", "square", "sqrt", "log", "copy", "abs"]
BINARY = ["add", "mul", "sub", "div", "max"]


class _Graph:
    """SSA values by shape, so every op line reads values that exist."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.n = 0
        self.pool: dict[str, list[str]] = {k: [] for k in SHAPES}
        self.lines: list[str] = []

    def new(self, shape: str) -> str:
        self.n += 1
        name = f"%v{self.n}"
        self.pool[shape].append(name)
        if len(self.pool[shape]) > 64:
            self.pool[shape].pop(0)
        return name

    def pick(self, shape: str) -> str:
        return self.rng.choice(self.pool[shape][-16:])

    def emit(self, shape: str, text: str) -> None:
        self.lines.append(f"  {self.new(shape)} = {text} -> {SHAPES[shape]}")

    def step(self) -> None:
        rng = self.rng
        r = rng.random()
        if r < 0.36:
            s = rng.choice(["act", "act", "tok", "mlp", "score", "head"])
            self.emit(s, f"{rng.choice(BINARY)}({self.pick(s)}, {self.pick(s)})")
        elif r < 0.52:
            s = rng.choice(["act", "tok", "mlp", "score"])
            self.emit(s, f"{rng.choice(UNARY)}({self.pick(s)})")
        elif r < 0.62:
            src, dst = rng.choice([("act", "tok"), ("tok", "act"), ("tok", "split"),
                                   ("split", "tok")])
            self.emit(dst, f"reshape({self.pick(src)})")
        elif r < 0.69:
            kind = rng.random()
            if kind < 0.4:
                self.emit("tok", f"dot_general({self.pick('tok')}, {self.pick('weight')}) "
                                 "{lhs_contract = [1], rhs_contract = [0]}")
            elif kind < 0.7:
                self.emit("score", f"dot_general({self.pick('head')}, {self.pick('head')}) "
                                   "{lhs_batch = [0, 1], rhs_batch = [0, 1], "
                                   "lhs_contract = [3], rhs_contract = [3]}")
            else:
                self.emit("head", f"dot_general({self.pick('score')}, {self.pick('head')}) "
                                  "{lhs_batch = [0, 1], rhs_batch = [0, 1], "
                                  "lhs_contract = [3], rhs_contract = [2]}")
        elif r < 0.75:
            if rng.random() < 0.5:
                self.emit("score", f"broadcast_in_dim({self.pick('rows')}) {{dims = [0, 1, 2]}}")
            else:
                self.emit("act", f"broadcast_in_dim({self.pick('act')}) {{dims = [0, 1, 2]}}")
        elif r < 0.80:
            if rng.random() < 0.5:
                kind = rng.choice(["sum", "max"])
                self.emit("rows", f"reduce({self.pick('score')}) {{dims = [3], kind = \"{kind}\"}}")
            else:
                self.emit("weight", f"reduce({self.pick('weight')}) {{dims = []}}")
        elif r < 0.83:
            src, dst = rng.choice([("head", "split"), ("split", "head")])
            self.emit(dst, f"transpose({self.pick(src)}) {{perm = [0, 2, 1, 3]}}")
        elif r < 0.86:
            if rng.random() < 0.5:
                self.emit("act32", f"convert({self.pick('act')}) {{dtype = \"f32\"}}")
            else:
                self.emit("act", f"convert({self.pick('act32')}) {{dtype = \"bf16\"}}")
        elif r < 0.88:
            value = rng.choice(["0.0", "1.0", "-inf", "0.08838834764831845", "1e-05"])
            self.emit(rng.choice(["act", "score"]), f"constant() {{value = {value}}}")
        elif r < 0.98:
            s = rng.choice(["act", "tok", "mlp"])
            self.emit(s, f"{rng.choice(BINARY)}({self.pick(s)}, {self.pick(s)})")
        elif r < 0.99:
            self.emit("mlp", f"dot_general({self.pick('tok')}, {self.pick('wmlp')}) "
                             "{lhs_contract = [1], rhs_contract = [0]}")
        else:
            self.lines.append(f"  // layer {self.n // 400}: backward of the attention block")


def generate(lines: int = 100_000, seed: int = 0) -> str:
    """A listing of exactly ``lines`` lines (at least 20)."""
    rng = random.Random(seed)
    g = _Graph(rng)
    header = [f"func.func @main(%x: {ACT}, %xt: {TOK}, %xh: {HEADT}, %xs: {SCORE}, "
              f"%xr: {ROWS}, %xm: {MLPT}, %x32: {ACT32}, %xp: {SPLIT}, %w0: {WEIGHT}, "
              f"%w1: {WEIGHT}, %w2: {WMLP}) {{"]
    for name, shape in [("%x", "act"), ("%xt", "tok"), ("%xh", "head"), ("%xs", "score"),
                        ("%xr", "rows"), ("%xm", "mlp"), ("%x32", "act32"), ("%xp", "split"),
                        ("%w0", "weight"), ("%w1", "weight"), ("%w2", "wmlp")]:
        g.pool[shape].append(name)
    footer_ops = 2
    graph = ["func.func @symbolic_shape_graph() {", "  SymbolicDim @S0 {max = 64}",
             "  SymbolicDim @S1 {max = 8192}", "  SymbolicDim @S2", "  @S2 = Mul @S0, @S1", "}"]
    body = lines - len(header) - footer_ops - len(graph)
    if body < 1:
        raise ValueError("at least 20 lines")
    while len(g.lines) < body:
        g.step()
    outputs = ", ".join(g.pool["act"][-2:] + g.pool["tok"][-1:])
    text_lines = header + g.lines + [f"  return {outputs}", "}"] + graph
    return "\n".join(text_lines) + "\n"


def attr_fraction(text: str) -> float:
    """The share of op lines that carry an attribute dict."""
    ops = [ln for ln in text.splitlines() if " = " in ln and "(" in ln and ln.startswith("  %")]
    return sum(1 for ln in ops if ") {" in ln) / len(ops)


def best_time(fn, repeat: int) -> tuple[float, float]:
    """Best wall-clock and best CPU seconds of ``repeat`` calls of ``fn``.

    CPU time is what the parser itself costs; on a shared machine the wall clock also
    counts the time the process waited for a core.
    """
    wall = cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def measure(text: str, repeat: int = 3) -> dict[str, float]:
    """Lines per second of parse and of parse + print, best of ``repeat`` runs each."""
    n = text.count("\n")
    parse_module(text, "bench.mlir")  # warm up: grammar compiled, caches filled
    parse_wall, parse_cpu = best_time(lambda: parse_module(text, "bench.mlir"), repeat)
    both_wall, both_cpu = best_time(lambda: format_module(parse_module(text, "bench.mlir")),
                                    repeat)
    return {"lines": n, "mb": len(text.encode()) / 1e6,
            "parse_s": parse_wall, "parse_cpu_s": parse_cpu,
            "parse_print_s": both_wall, "parse_print_cpu_s": both_cpu,
            "parse_lines_per_s": n / parse_wall, "parse_cpu_lines_per_s": n / parse_cpu,
            "parse_print_lines_per_s": n / both_wall,
            "parse_print_cpu_lines_per_s": n / both_cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=100_000, help="lines of the generated listing")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure; the best counts")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    text = generate(args.lines, args.seed)
    r = measure(text, args.repeat)
    best = f"best of {args.repeat}"
    print(f"listing: {r['lines']} lines, {r['mb']:.1f} MB, "
          f"{attr_fraction(text):.0%} of op lines with attributes")
    print(f"parse: {r['parse_lines_per_s']:,.0f} lines/s wall ({r['parse_s']:.2f} s, {best})")
    print(f"parse: {r['parse_cpu_lines_per_s']:,.0f} lines/s cpu ({r['parse_cpu_s']:.2f} s, {best})")
    print(f"parse+print: {r['parse_print_lines_per_s']:,.0f} lines/s wall "
          f"({r['parse_print_s']:.2f} s, {best})")
    print(f"parse+print: {r['parse_print_cpu_lines_per_s']:,.0f} lines/s cpu "
          f"({r['parse_print_cpu_s']:.2f} s, {best})")


if __name__ == "__main__":
    main()
