"""The ``indexops-npu`` command: ``check``, ``plan`` and ``run`` a PyPTO scatter_update.

Shapes are written ``256x128x1x576``; dtypes as in PyPTO's docs (fp32, fp16, bf16, int32,
int16, int64). Without arguments every subcommand uses :data:`DEFAULT`: a paged KV cache
write of a decode batch. Bad arguments end as argparse's do: ``indexops-npu <command>:
error: ...`` on stderr and exit status 2, also when the value is only found bad later (an
:class:`~indexops.IndexOpsError`); a check that rejects its tiling, or a run whose result
differs, exits with 1.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import indexops
from indexops import IndexOpsError, IndexOpsValueError
from indexops._extension import scatter_update_src_shape

from .dtypes import dtype_name, numpy_dtype
from .execute import emulate_scatter_update
from .hardware import PROFILES
from .plan import Plan, plan_scatter_update
from .rules import RULES, check_scatter_update


@dataclass(frozen=True)
class Problem:
    """A scatter_update problem as the command line describes it."""

    input_shape: tuple[int, ...]
    index_shape: tuple[int, int]
    dtype: str
    index_dtype: str

    @property
    def src_shape(self) -> tuple[int, ...]:
        return scatter_update_src_shape(self.input_shape, self.index_shape)


DEFAULT = Problem((512, 128, 1, 576), (64, 2), "bf16", "int64")
"""Decode step of a DeepSeek-style MLA model: 64 sequences write 2 tokens each (one decoded,
one multi-token-prediction draft) into a paged latent cache of 512 blocks of 128 slots,
``d = 576`` (512 latent + 64 RoPE) in bf16, with int64 slots."""


def _shape(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape like 256x128x1x576") from None


def _index_shape(text: str) -> tuple[int, int]:
    shape = _shape(text)
    if len(shape) != 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not an index shape [b]x[s] like 8x256")
    return shape[0], shape[1]


def _dtype(arg: str) -> Callable[[str], str]:
    """An argparse type: the canonical dtype name, or argparse's error with ours as text."""

    def convert(text: str) -> str:
        try:
            return dtype_name(text, arg)
        except IndexOpsError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(
        prog="indexops-npu", description="Check, plan and emulate PyPTO scatter_update on Ascend."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    subs = {}
    for name, text in (
        ("check", "check one tiling against the rules"),
        ("plan", "rank the legal tilings by estimated time"),
        ("run", "emulate on random data and report"),
    ):
        sub = subs[name] = commands.add_parser(name, help=text, description=text)
        sub.add_argument("--input", type=_shape, default=DEFAULT.input_shape, help="input shape")
        sub.add_argument(
            "--index", type=_index_shape, default=DEFAULT.index_shape, help="index [b]x[s]"
        )
        sub.add_argument(
            "--dtype",
            type=_dtype("dtype"),
            default=DEFAULT.dtype,
            help="fp32, fp16, bf16, int32, int16 (int8 under --rules pypto-0.2.0)",
        )
        sub.add_argument(
            "--index-dtype",
            type=_dtype("index_dtype"),
            default=DEFAULT.index_dtype,
            help="int64, int32, int16",
        )
        sub.add_argument("--hardware", choices=sorted(PROFILES), default="a2")
        sub.add_argument("--rules", choices=RULES, default="doc")
        if name == "plan":
            sub.add_argument(
                "--top",
                type=_positive,
                default=10,
                help="how many tilings to show, each with why it costs what it does",
            )
            continue
        sub.add_argument("--view", type=_shape, help="ViewShape (default: the best plan's)")
        sub.add_argument("--tile", type=_shape, help="TileShape (default: the best plan's)")
        if name == "run":
            sub.add_argument("--seed", type=int, default=0)
            sub.add_argument("--padding", type=float, default=0.1, help="fraction of -1 slots")
            sub.add_argument("--plot", metavar="PNG", help="save the plan drawing here")
    return parser, subs


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (1 when a check or run fails).

    Bad arguments print ``indexops-npu <command>: error: ...`` and exit with status 2
    (:class:`SystemExit`), as argparse does.
    """
    parser, subs = _parser()
    args = parser.parse_args(argv)
    problem = Problem(args.input, args.index, args.dtype, args.index_dtype)
    try:
        return {"check": _check, "plan": _plan, "run": _run}[args.command](problem, args)
    except IndexOpsError as exc:
        subs[args.command].error(str(exc))


def _describe(problem: Problem, args: argparse.Namespace) -> None:
    hardware = PROFILES[args.hardware]
    print(
        f"scatter_update: input {problem.input_shape} {problem.dtype}, index "
        f"{problem.index_shape} {problem.index_dtype}, src {problem.src_shape}; "
        f"{hardware.name}, rules={args.rules!r}"
    )
    print(f"device: {hardware.scope()}")


def _plans(problem: Problem, args: argparse.Namespace) -> list[Plan]:
    return plan_scatter_update(
        problem.input_shape,
        problem.index_shape,
        dtype=problem.dtype,
        index_dtype=problem.index_dtype,
        hardware=PROFILES[args.hardware],
        rules=args.rules,
    )


def _tiling(problem: Problem, args: argparse.Namespace) -> tuple[tuple[int, ...], ...]:
    if args.view is not None and args.tile is not None:
        return args.view, args.tile
    plans = _plans(problem, args)
    if not plans:
        raise IndexOpsValueError("no legal tiling: the problem does not fit any tile")
    best = plans[0]
    print(f"using the best plan: view {best.view_shape}, tile {best.tile_shape}")
    return args.view or best.view_shape, args.tile or best.tile_shape


def _check(problem: Problem, args: argparse.Namespace) -> int:
    _describe(problem, args)
    view, tile = _tiling(problem, args)
    result = check_scatter_update(
        problem.input_shape,
        problem.index_shape,
        problem.src_shape,
        dtype=problem.dtype,
        index_dtype=problem.index_dtype,
        view_shape=view,
        tile_shape=tile,
        hardware=PROFILES[args.hardware],
        rules=args.rules,
    )
    print(result)
    return 0 if result.ok else 1


def _plan(problem: Problem, args: argparse.Namespace) -> int:
    _describe(problem, args)
    plans = _plans(problem, args)
    print(f"{len(plans)} legal tilings; the best {min(args.top, len(plans))}:")
    for plan in plans[: args.top]:
        print(f"  {plan}\n      {plan.estimate.explain()}")
    return 0 if plans else 1


def _run(problem: Problem, args: argparse.Namespace) -> int:
    _describe(problem, args)
    view, tile = _tiling(problem, args)
    input, index, src = random_problem(problem, args.seed, args.padding)
    expected = indexops.scatter_update(input, -2, index, src, copy=True)
    report = emulate_scatter_update(
        input,
        -2,
        index,
        src,
        view_shape=view,
        tile_shape=tile,
        hardware=PROFILES[args.hardware],
        rules=args.rules,
    )
    print(report.summary())
    same = np.array_equal(input.view(np.uint8), expected.view(np.uint8))
    print(f"result equals indexops.scatter_update: {'yes' if same else 'NO'}")
    if args.plot:
        report.plot(args.plot)
        print(f"plan drawn to {args.plot}")
    return 0 if same else 1


def random_problem(
    problem: Problem, seed: int = 0, padding: float = 0.1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Zeroed input, slots and random src for ``problem`` (NumPy).

    4-D: each sequence (index row) writes consecutive slots of its own block, as a decode
    step appends to each sequence's last page; 2-D: distinct random rows. A ``padding``
    fraction of slots is -1.
    """
    rng = np.random.default_rng(seed)
    b, s = problem.index_shape
    shape = problem.input_shape
    if len(shape) == 4 and b <= shape[0] and s <= shape[1]:
        blocks = rng.choice(shape[0], size=b, replace=False)
        starts = rng.integers(0, shape[1] - s + 1, size=b)
        slots = (blocks * shape[1] + starts)[:, None] + np.arange(s)[None, :]
    else:
        rows = int(np.prod(shape[:-1]))
        slots = rng.choice(rows, size=b * s, replace=b * s > rows).reshape(b, s)
    slots = np.where(rng.random((b, s)) < padding, -1, slots)
    index = slots.astype(numpy_dtype(problem.index_dtype))
    value = numpy_dtype(problem.dtype)
    src = (rng.standard_normal(problem.src_shape) * 8).astype(np.float32).astype(value)
    return np.zeros(shape, dtype=value), index, src
