"""The ``indexops-npu`` command: ``check``, ``plan`` and ``run`` a PyPTO scatter_update.

Shapes are written ``256x128x1x576``; dtypes as in PyPTO's docs (fp32, fp16, bf16, int32,
int16, int64). Without arguments every subcommand uses :data:`DEFAULT`: a paged KV cache
write of a decode batch (``--help`` shows every default). ``check`` and ``run`` print the
view and tile they check, and say so when a tile larger than its view is cut to the view,
as the emulator runs it. Bad arguments end as argparse's do: ``indexops-npu <command>:
error: ...`` on stderr and exit status 2, also when the value is only found bad later (an
:class:`~indexops.IndexOpsError`, a problem the rules reject whatever its tiling); a check
that rejects its tiling, a plan with no legal tiling, or a run whose result differs, exits
with 1 (:data:`EXIT_STATUS`). A shape may start with a minus sign (``--input -4x8`` is read
as ``--input=-4x8`` and refused for its negative dim), and an unknown flag gets the closest
known one as a suggestion.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import indexops
from indexops import IndexOpsError, IndexOpsValueError
from indexops._extension import scatter_update_src_shape, type_error

from .dtypes import INDEX_DTYPES, LOOSE_VALUE_DTYPES, VALUE_DTYPES, dtype_name, numpy_dtype
from .execute import emulate_scatter_update, require_runnable
from .hardware import PROFILES, Hardware
from .plan import Plan, plan_scatter_update
from .rules import RULES, CheckResult, RuleViolationError, check_problem, check_scatter_update


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

    def check(
        self,
        hardware: Hardware,
        rules: str,
        view_shape: Sequence[int] | None = None,
        tile_shape: Sequence[int] | None = None,
    ) -> CheckResult:
        """The rules' verdict on this problem: on the tiling of ``view_shape`` and
        ``tile_shape`` (:func:`check_scatter_update`), or, without them, on what no tiling
        mends (:func:`check_problem`)."""
        shapes = (self.input_shape, self.index_shape, self.src_shape)
        if view_shape is None or tile_shape is None:
            return check_problem(
                *shapes, dtype=self.dtype, index_dtype=self.index_dtype, hardware=hardware,
                rules=rules,
            )  # fmt: skip
        return check_scatter_update(
            *shapes, dtype=self.dtype, index_dtype=self.index_dtype, view_shape=view_shape,
            tile_shape=tile_shape, hardware=hardware, rules=rules,
        )  # fmt: skip


_LOOSE_NOTE = f" ({', '.join(LOOSE_VALUE_DTYPES)} under --rules pypto-0.2.0)"

DEFAULT = Problem((512, 128, 1, 576), (64, 2), "bf16", "int64")
"""Decode step of a DeepSeek-style MLA model: 64 sequences write 2 tokens each (one decoded,
one multi-token-prediction draft) into a paged latent cache of 512 blocks of 128 slots,
``d = 576`` (512 latent + 64 RoPE) in bf16, with int64 slots."""


_WHOLE = re.compile(r"-?[0-9]+")


def _shape_text(shape: Sequence[int]) -> str:
    """A shape as the command line writes it: ``512x128x1x576``."""
    return "x".join(map(str, shape))


def _shape(text: str) -> tuple[int, ...]:
    parts = text.lower().split("x")
    if not all(_WHOLE.fullmatch(part) for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape like 256x128x1x576")
    return tuple(int(part) for part in parts)


def _index_shape(text: str) -> tuple[int, int]:
    shape = _shape(text)
    if len(shape) != 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not an index shape [b]x[s] like 8x256")
    return shape[0], shape[1]


def _dtype(arg: str, allowed: Sequence[str], note: str = "") -> Callable[[str], str]:
    """An argparse type: the canonical dtype name; a name no one knows gets the ``allowed``
    ones (and ``note``) in argparse's error."""

    def convert(text: str) -> str:
        try:
            return dtype_name(text, arg)
        except IndexOpsError:
            error = type_error("indexops_npu", arg, text, f"one of {list(allowed)}{note}")
            raise argparse.ArgumentTypeError(str(error)) from None

    return convert


def _whole(least: int, what: str) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``least``, ``what`` in the error."""

    def convert(text: str) -> int:
        if not _WHOLE.fullmatch(text) or int(text) < least:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {what} whole number")
        return int(text)

    return convert


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction from 0 to 1")
    return value


def _image_path(text: str) -> str:
    """An argparse type: where to save a figure, checked before the run that draws it. A
    name without a suffix gets matplotlib's default one, as ``savefig`` gives it, so that
    the file checked and named is the file written."""
    if importlib.util.find_spec("matplotlib") is None:
        raise argparse.ArgumentTypeError("drawing needs matplotlib (the plot extra)")
    import matplotlib
    from matplotlib.backend_bases import FigureCanvasBase

    # os.path, not Path: Path.is_dir raises for a name too long before Python 3.12
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder: name a file in it")
    path = Path(text)
    if not path.suffix:
        text = f"{text}.{matplotlib.rcParams['savefig.format']}"
        path = Path(text)
    formats = FigureCanvasBase.get_supported_filetypes()
    if path.suffix[1:].lower() not in formats:
        raise argparse.ArgumentTypeError(
            f"{text!r}: matplotlib saves no {path.suffix} files, only {', '.join(formats)}"
        )
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder: name a file in it")
    if not os.path.isdir(path.parent):
        raise argparse.ArgumentTypeError(f"{text!r}: no folder {str(path.parent)!r} to write in")
    try:
        _try_writing(path)
    except OSError as error:
        raise argparse.ArgumentTypeError(
            f"{text!r} cannot be written: {error.strerror or error}"
        ) from None
    return text


def _try_writing(path: Path) -> None:
    """Open ``path`` for writing as the figure will be, and leave it as it was: the system
    says what no earlier look can (a name too long, a read-only folder or file system).

    Raises
    ------
    OSError
        Where the file cannot be created or written.
    """
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        os.close(os.open(path, os.O_WRONLY))  # no O_TRUNC: the file stays as it is
        return
    os.close(descriptor)
    os.unlink(path)


HARDWARE_HELP = "device profile: " + "; ".join(
    f"{key} = {hardware.name}, {hardware.vector_cores} vector cores, {hardware.ub_bytes} B UB"
    for key, hardware in sorted(PROFILES.items())
)

RULES_HELP = (
    "rule set: doc = the documented contract; pypto-0.2.0 = what PyPTO 0.2.0's compiler "
    "accepts (looser: its extras are warnings)"
)


EXAMPLES = """\
examples:
  indexops-npu plan                   rank the tilings of the default problem
  indexops-npu check --view 64x2x1x576 --tile 8x2x1x576
  indexops-npu run --index 256x1 --padding 0 --plot run.png
  indexops-npu plan --input 4096x128 --index 8x512 --dtype fp16 --top 3
  indexops-npu <command> --help       every argument, its format and its default
"""

EXIT_STATUS = {
    "check": "0 the tiling keeps every rule, 1 it breaks one (each violation printed)",
    "plan": "0 tilings listed, 1 no legal tiling",
    "run": "0 the result equals indexops.scatter_update, 1 it differs",
}
"""What each command's exit status 0 and 1 mean; 2 is a bad argument for all three."""


def _epilog(command: str) -> str:
    return (
        f"exit status: {EXIT_STATUS[command]}, 2 a bad argument (a malformed value, or a "
        "problem the rules reject whatever its tiling)"
    )


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each default that is set; one that is None is said in the help itself."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None:
            return action.help or ""
        return super()._get_help_string(action) or ""


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(
        prog="indexops-npu",
        description="Check, plan and emulate PyPTO scatter_update on Ascend.",
        epilog=EXAMPLES
        + "\nexit status:\n"
        + "".join(f"  {command:7}{meaning}\n" for command, meaning in EXIT_STATUS.items())
        + "  all    2 a bad argument",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s (indexops) {indexops.__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    subs = {}
    for name, text in (
        ("check", "check one tiling against the rules"),
        ("plan", "rank the legal tilings by estimated time"),
        ("run", "emulate on random data and report"),
    ):
        sub = subs[name] = commands.add_parser(
            name,
            help=text,
            description=f"{text[0].upper()}{text[1:]}. The defaults are a decode step of a "
            "paged KV cache.",
            epilog=_epilog(name),
            formatter_class=_HelpFormatter,
        )
        _problem_arguments(sub)
        if name == "plan":
            sub.add_argument(
                "--top",
                type=_whole(1, "positive"),
                default=10,
                help="how many tilings to show, each with why it costs what it does",
            )
            sub.add_argument(
                "--plot",
                type=_image_path,
                metavar="PNG",
                help="save a drawing of the ranked plans here (needs matplotlib)",
            )
            continue
        sub.add_argument(
            "--view",
            type=_shape,
            metavar="SHAPE",
            help="ViewShape, [viewB*s]x[d] or [viewB]x[viewS]x1x[d] (default: the best plan's)",
        )
        sub.add_argument(
            "--tile",
            type=_shape,
            metavar="SHAPE",
            help="TileShape, [tileS]x[d] or [tileB]x[tileS]x1x[d] (default: the best plan's)",
        )
        if name == "run":
            sub.add_argument(
                "--seed", type=_whole(0, "non-negative"), default=0, help="of the random data"
            )
            sub.add_argument(
                "--padding", type=_fraction, default=0.1, help="fraction of -1 (padding) slots"
            )
            sub.add_argument(
                "--plot",
                type=_image_path,
                metavar="PNG",
                help="save a drawing of the run here (needs matplotlib)",
            )
    return parser, subs


PROBLEM_ARGUMENTS: dict[str, dict[str, object]] = {
    "--input": {
        "type": _shape,
        "metavar": "SHAPE",
        "default": _shape_text(DEFAULT.input_shape),
        "help": "input (cache) shape: [blockNum]x[blockSize]x1x[d], or [rows]x[d]",
    },
    "--index": {
        "type": _index_shape,
        "metavar": "BxS",
        "default": _shape_text(DEFAULT.index_shape),
        "help": "index shape [b]x[s]: b sequences of s tokens",
    },
    "--dtype": {
        "type": _dtype("dtype", VALUE_DTYPES, _LOOSE_NOTE),
        "default": DEFAULT.dtype,
        "help": f"of input and src: {', '.join(VALUE_DTYPES)}{_LOOSE_NOTE}; "
        "NumPy's and PyPTO's names too (float32, bfloat16, DT_FP32, ...)",
    },
    "--index-dtype": {
        "type": _dtype("index_dtype", INDEX_DTYPES),
        "default": DEFAULT.index_dtype,
        "help": f"of index: {', '.join(INDEX_DTYPES)}",
    },
    "--hardware": {"choices": sorted(PROFILES), "default": "a2", "help": HARDWARE_HELP},
    "--rules": {"choices": RULES, "default": "doc", "help": RULES_HELP},
}
"""The arguments that say the problem, each defaulting to :data:`DEFAULT`'s (a shape as
the command line writes it, which argparse converts as it converts the user's)."""


def _problem_arguments(sub: argparse.ArgumentParser) -> None:
    for flag, options in PROBLEM_ARGUMENTS.items():
        sub.add_argument(flag, **options)  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (1 when a check or run fails).

    Bad arguments print ``indexops-npu <command>: error: ...`` and exit with status 2
    (:class:`SystemExit`), as argparse does.
    """
    parser, subs = _parser()
    args, unknown = parser.parse_known_args(_negative_shapes_attached(argv))
    if unknown:
        subs[args.command].error(_unrecognized(subs[args.command], unknown))
    problem = Problem(args.input, args.index, args.dtype, args.index_dtype)
    try:
        _require_legal(problem, args)
        return {"check": _check, "plan": _plan, "run": _run}[args.command](problem, args)
    except IndexOpsError as exc:
        subs[args.command].error(str(exc))


_SHAPE_FLAGS = ("--input", "--index", "--view", "--tile")
_NEGATIVE_SHAPE = re.compile(r"-[0-9]+(x-?[0-9]+)*", re.IGNORECASE)


def _negative_shapes_attached(argv: Sequence[str] | None) -> list[str]:
    """``argv`` with a shape that starts with a minus sign attached to its flag
    (``--input -4x8`` as ``--input=-4x8``): argparse takes it for a flag of its own and
    says only "expected one argument"; attached, the shape check names the bad dim."""
    given = list(sys.argv[1:] if argv is None else argv)
    out: list[str] = []
    for arg in given:
        if out and out[-1] in _SHAPE_FLAGS and _NEGATIVE_SHAPE.fullmatch(arg):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def _unrecognized(sub: argparse.ArgumentParser, unknown: list[str]) -> str:
    """argparse's message for ``unknown`` arguments, with the closest flag of ``sub`` to
    each unknown flag."""
    flags = [flag for action in sub._actions for flag in action.option_strings]
    hints = []
    for arg in unknown:
        flag = arg.split("=", 1)[0]
        close = difflib.get_close_matches(flag, flags, n=1) if flag.startswith("--") else []
        if close:
            hints.append(f"{flag}: did you mean {close[0]}?")
    text = f"unrecognized arguments: {' '.join(unknown)}"
    return f"{text} ({'; '.join(hints)})" if hints else text


FUNCTIONS = {
    "check": "check_scatter_update",
    "plan": "plan_scatter_update",
    "run": "emulate_scatter_update",
}
"""The function of :mod:`indexops_npu` that each command calls, which names its errors."""


def _require_legal(problem: Problem, args: argparse.Namespace) -> None:
    """Raise for a problem the rules reject whatever its tiling (shapes, dtypes, sizes),
    named by the command's function, before any command plans or checks a tiling."""
    result = problem.check(PROFILES[args.hardware], args.rules)
    if not result.ok:
        raise RuleViolationError(FUNCTIONS[args.command], result)


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
    """The view and tile to check or run: those given, the best plan's for the others."""
    view, tile = args.view, args.tile
    if view is None or tile is None:
        plans = _plans(problem, args)
        if not plans:
            raise IndexOpsValueError("no legal tiling: the problem does not fit any tile")
        view, tile = view or plans[0].view_shape, tile or plans[0].tile_shape
    source = {None: "the best plan's"}
    print(
        f"tiling: view {_shape_text(view)} ({source.get(args.view, 'given')}), "
        f"tile {_shape_text(tile)} ({source.get(args.tile, 'given')})"
    )
    return view, tile


def _cuts(problem: Problem, result: CheckResult) -> list[str]:
    """What the check cut to fit: a view past the index, a tile past its view (in tokens)."""
    if result.tiling is None:
        return []
    given = result.tiling
    b, s = problem.index_shape
    cut = given.clipped(b, s, given.tile_d)
    notes = []
    if (cut.view_b, cut.view_s) != (given.view_b, given.view_s):
        notes.append(
            f"note: the view of {given.view_b}x{given.view_s} tokens is larger than the index "
            f"{b}x{s}: cut to {cut.view_b}x{cut.view_s} tokens"
        )
    if (cut.tile_b, cut.tile_s) != (given.tile_b, given.tile_s):
        notes.append(
            f"note: the tile of {given.tile_b}x{given.tile_s} tokens is larger than its view "
            f"of {cut.view_b}x{cut.view_s}: cut to {cut.tile_b}x{cut.tile_s} tokens, as the "
            "emulator runs it (the UB bytes are the cut tile's)"
        )
    return notes


def _checked(
    problem: Problem, args: argparse.Namespace
) -> tuple[tuple[int, ...], tuple[int, ...], CheckResult]:
    """The view and tile to check or run and their check, printed with what is cut to fit."""
    view, tile = _tiling(problem, args)
    result = problem.check(PROFILES[args.hardware], args.rules, view_shape=view, tile_shape=tile)
    for note in _cuts(problem, result):
        print(note)
    return view, tile, result


def _check(problem: Problem, args: argparse.Namespace) -> int:
    _describe(problem, args)
    _, _, result = _checked(problem, args)
    print(result)
    return 0 if result.ok else 1


def _plan(problem: Problem, args: argparse.Namespace) -> int:
    _describe(problem, args)
    plans = _plans(problem, args)
    print(f"{len(plans)} legal tilings; the best {min(args.top, len(plans))}:")
    for plan in plans[: args.top]:
        print(f"  {plan}\n      {plan.estimate.explain()}")
    if args.plot and plans:
        from .plot import draw_plans

        draw_plans(plans, top=args.top, path=args.plot)
        print(f"plans drawn to {args.plot}")
    return 0 if plans else 1


def _run(problem: Problem, args: argparse.Namespace) -> int:
    _describe(problem, args)
    view, tile, result = _checked(problem, args)
    require_runnable(result)  # before the arrays are made: they may be too large to make
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
        print(f"run drawn to {args.plot}")
    return 0 if same else 1


def random_problem(
    problem: Problem, seed: int = 0, padding: float = 0.1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Zeroed input, slots and random src for ``problem`` (NumPy).

    4-D: each sequence (index row) writes consecutive slots of its own block, as a decode
    step appends to each sequence's last page; 2-D: distinct random rows. A ``padding``
    fraction of slots is -1.

    Raises
    ------
    IndexOpsValueError
        When the index dtype cannot hold every row number of the input.
    """
    b, s = problem.index_shape
    shape, rows = problem.input_shape, math.prod(problem.input_shape[:-1])
    index_type = numpy_dtype(problem.index_dtype)
    if rows - 1 > np.iinfo(index_type).max:
        raise IndexOpsValueError(
            f"index_dtype={problem.index_dtype} cannot hold the slots of the {rows} rows of "
            f"input {shape}: use a wider index dtype"
        )
    rng = np.random.default_rng(seed)
    if len(shape) == 4 and b <= shape[0] and s <= shape[1]:
        blocks = rng.choice(shape[0], size=b, replace=False)
        starts = rng.integers(0, shape[1] - s + 1, size=b)
        slots = (blocks * shape[1] + starts)[:, None] + np.arange(s)[None, :]
    else:
        slots = rng.choice(rows, size=b * s, replace=b * s > rows).reshape(b, s)
    slots = np.where(rng.random((b, s)) < padding, -1, slots)
    index = slots.astype(index_type)
    value = numpy_dtype(problem.dtype)
    src = (rng.standard_normal(problem.src_shape) * 8).astype(np.float32).astype(value)
    return np.zeros(shape, dtype=value), index, src
