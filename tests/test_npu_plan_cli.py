"""indexops_npu planner and the indexops-npu command."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from indexops_npu import RuleViolationError, check_scatter_update, cli, plan_scatter_update
from indexops_npu.cli import DEFAULT, main, random_problem

from indexops._extension import scatter_update_src_shape


def test_plans_are_legal_and_ranked():
    plans = plan_scatter_update((64, 16, 1, 128), (8, 32), dtype="fp16", index_dtype="int32")
    assert plans
    times = [p.estimate.time_s for p in plans]
    assert times == sorted(times)
    for plan in plans[:20]:
        result = check_scatter_update(
            (64, 16, 1, 128),
            (8, 32),
            scatter_update_src_shape((64, 16, 1, 128), (8, 32)),
            dtype="fp16",
            index_dtype="int32",
            view_shape=plan.view_shape,
            tile_shape=plan.tile_shape,
        )
        assert result.ok and result.ub_bytes == plan.ub_bytes <= 196608


def test_2d_plans_follow_the_rule_set():
    doc = plan_scatter_update((40, 8), (4, 6), dtype="fp32", index_dtype="int64")
    assert {p.tile_shape[0] for p in doc} == {1, 2, 3, 6}
    loose = plan_scatter_update(
        (40, 8), (4, 6), dtype="fp32", index_dtype="int64", rules="pypto-0.2.0"
    )
    assert {12, 24} <= {p.tile_shape[0] for p in loose}


def test_large_rows_leave_only_small_tiles():
    plans = plan_scatter_update((256, 128, 1, 576), (8, 256), dtype="bf16", index_dtype="int64")
    assert all(p.ub_bytes <= 196608 for p in plans)
    assert max(p.tile_shape[0] * p.tile_shape[1] for p in plans) == 128  # 169 fit; pow2 128


def test_plan_of_a_bad_problem_raises():
    with pytest.raises(RuleViolationError, match="dtype"):
        plan_scatter_update((8, 4), (2, 2), dtype="fp64", index_dtype="int64")


def test_cli_defaults(capsys):
    assert main(["plan"]) == 0
    out = capsys.readouterr().out
    assert "legal tilings" in out and "us (" in out
    assert main(["check"]) == 0
    assert "OK under rules='doc'" in capsys.readouterr().out


def test_cli_run_default(capsys):
    pytest.importorskip("ml_dtypes")  # the default problem is bf16
    assert main(["run"]) == 0
    out = capsys.readouterr().out
    assert "result equals indexops.scatter_update: yes" in out and "tiles" in out


def test_cli_check_reports_violations(capsys):
    code = main(
        [
            "check",
            "--input",
            "256x128x1x576",
            "--index",
            "8x256",
            "--view",
            "8x256x1x576",
            "--tile",
            "1x256x1x576",
            "--dtype",
            "bf16",
        ]
    )
    assert code == 1
    assert "ub_overflow" in capsys.readouterr().out


def test_cli_run_2d_pypto_rules_and_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "plan.png"
    code = main(
        [
            "run",
            "--input",
            "64x32",
            "--index",
            "4x8",
            "--dtype",
            "fp16",
            "--view",
            "32x32",
            "--tile",
            "16x32",
            "--rules",
            "pypto-0.2.0",
            "--hardware",
            "a3",
            "--plot",
            str(png),
        ]
    )
    assert code == 0 and png.exists()
    assert "yes" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plan", "--input", "12xq"], "argument --input: '12xq' is not a shape"),
        (["plan", "--index", "8"], "argument --index: '8' is not an index shape"),
        (["plan", "--input", "4_0x4"], "argument --input: '4_0x4' is not a shape"),
        (["plan", "--top", "0"], "argument --top: '0' is not a positive whole number"),
        (["plan", "--top", "²"], "argument --top: '²' is not a positive whole number"),
        (["run", "--seed", "-1"], "argument --seed: '-1' is not a non-negative whole number"),
        # padding is the fraction of slots that are -1
        (["run", "--padding", "1.5"], "argument --padding: '1.5' is not a fraction from 0 to 1"),
        (["run", "--padding", "-5"], "argument --padding: '-5' is not a fraction from 0 to 1"),
        (["run", "--padding", "nan"], "argument --padding: 'nan' is not a fraction from 0 to 1"),
        # a dtype no one knows: the IndexOpsTypeError's text with the dtypes the rules allow
        (
            ["check", "--input", "256x128x1x576", "--index", "8x256", "--dtype", "bf17"],
            "argument --dtype: indexops_npu: dtype='bf17' is not allowed: one of "
            "['fp32', 'fp16', 'bf16', 'int32', 'int16'] (int8 under --rules pypto-0.2.0)\n",
        ),
        (
            ["run", "--index-dtype", "int9"],
            "argument --index-dtype: indexops_npu: index_dtype='int9' is not allowed: one of "
            "['int64', 'int32', 'int16']\n",
        ),
        # values found bad after parsing: an IndexOpsError from the planner or the check
        (["plan", "--dtype", "fp64"], "rejected under rules='doc': [dtype] dtype=fp64"),
        (["check", "--input", "8x4x2", "--index", "2x2"], "input must be 2-D"),
        (["plan", "--input=-4x8"], "[negative_dim] input_shape=(-4, 8) has a negative dimension"),
        (["check", "--index", "0x2"], "[empty] index_shape=(0, 2): PyPTO does not support empty"),
        (
            ["run", "--input", "40000x8", "--index", "4x8", "--index-dtype", "int16"],
            "index_dtype=int16 cannot hold the slots of the 40000 rows of input (40000, 8)",
        ),
        (["run", "--input", "4x8x1x200000", "--index", "2x2"], "no legal tiling"),
        # a shape with a minus sign is the shape's error, not argparse's "expected one argument"
        (
            ["check", "--input", "-256x128x1x576"],
            "check_scatter_update: rejected under rules='doc': "
            "[negative_dim] input_shape=(-256, 128, 1, 576) has a negative dimension",
        ),
        (["run", "--index", "-2x1"], "[negative_dim] index_shape=(-2, 1)"),
        # a flag typo: argparse's message, from the command, with the closest flag
        (["check", "--inptu", "4x4"], "unrecognized arguments: --inptu 4x4 (--inptu: did you mean"),
        (["plan", "--hardwre=a3"], "(--hardwre: did you mean --hardware?)"),
        # a problem no tiling mends, named by check's own function, with or without a tiling
        (
            ["check", "--input", "256x128x2x576"],
            "error: check_scatter_update: rejected under rules='doc': [shape] input_shape=(256, "
            "128, 2, 576): a 4-D cache is [blockNum, blockSize, 1, d]; dim 2 must be 1; a cache "
            "of H heads, [blockNum, blockSize, H, d] (vLLM's NHD layout), goes in as its view "
            "[blockNum, blockSize, 1, H*d]",
        ),
        (
            ["check", "--input", "256x128x2x576", "--view", "64x2x1x576", "--tile", "8x2x1x576"],
            "error: check_scatter_update: rejected under rules='doc': [shape]",
        ),
    ],
)
def test_cli_bad_arguments_exit_2_as_argparse_does(capsys, argv, message):
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: indexops-npu {argv[0]}")
    assert f"indexops-npu {argv[0]}: error: " in err and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["run", "plan"])
def test_cli_plot_path_is_checked_before_the_run(capsys, tmp_path, command):
    pytest.importorskip("matplotlib")
    for path, message in [
        ("no-such-dir/x.png", "argument --plot: 'no-such-dir/x.png': no folder 'no-such-dir'"),
        (str(tmp_path), f"argument --plot: '{tmp_path}' is a folder: name a file in it"),
        (str(tmp_path / "x.xyz"), f"argument --plot: '{tmp_path / 'x.xyz'}': matplotlib saves no"),
    ]:
        with pytest.raises(SystemExit) as exit:
            main([command, "--plot", path])
        assert exit.value.code == 2
        out, err = capsys.readouterr()
        assert out == "" and f"indexops-npu {command}: error: {message}" in err


@pytest.mark.parametrize("command", ["run", "plan"])
def test_cli_plot_path_that_cannot_be_written_is_refused_before_the_run(capsys, tmp_path, command):
    pytest.importorskip("matplotlib")
    long_name = str(tmp_path / f"{'a' * 256}.png")  # over the 255 bytes a file name may have
    with pytest.raises(SystemExit) as exit:
        main([command, "--plot", long_name])
    assert exit.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and f"error: argument --plot: {long_name!r} cannot be written: " in err
    read_only = tmp_path / "read-only"
    read_only.mkdir(mode=0o555)
    if os.access(read_only, os.W_OK):  # root writes in it all the same
        return
    with pytest.raises(SystemExit) as exit:
        main([command, "--plot", str(read_only / "x.png")])
    assert exit.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and f"{str(read_only / 'x.png')!r} cannot be written: Permission" in err


@pytest.mark.parametrize("command", ["run", "plan"])
def test_cli_plot_path_without_a_suffix_is_the_file_written(capsys, tmp_path, command):
    """A name without a suffix is saved with matplotlib's default one (as savefig saves
    it): the command checks and names that file, and refuses it before the run where it
    cannot be written (a folder of that name)."""
    pytest.importorskip("matplotlib")
    drawing = tmp_path / "drawing"
    assert main([command, "--input", "4x8", "--index", "2x2", "--plot", str(drawing)]) == 0
    assert f"drawn to {drawing}.png" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == ["drawing.png"]
    (tmp_path / "blocked.png").mkdir()
    with pytest.raises(SystemExit) as exit:
        main([command, "--input", "4x8", "--index", "2x2", "--plot", str(tmp_path / "blocked")])
    assert exit.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and f"'{tmp_path / 'blocked.png'}' is a folder: name a file in it" in err


def test_cli_plot_path_check_leaves_the_folder_as_it_was(tmp_path):
    pytest.importorskip("matplotlib")
    existing = tmp_path / "old.png"
    existing.write_bytes(b"old")
    for path in (tmp_path / "new.png", existing):
        assert cli._image_path(str(path)) == str(path)  # --plot's argparse type
    assert [p.name for p in tmp_path.iterdir()] == ["old.png"]
    assert existing.read_bytes() == b"old"


def test_cli_run_over_the_size_limit_is_refused_before_the_arrays_are_made(capsys, monkeypatch):
    # 3e9 slots of one element: check rejects it; run once made the whole input (MemoryError)
    def unmade(*args: object) -> None:
        raise AssertionError("the arrays of a rejected run were made")

    monkeypatch.setattr(cli, "random_problem", unmade)
    argv = ["run", "--input", "3000000000x1", "--index", "1x1", "--view", "1x1", "--tile", "1x1"]
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert (
        "indexops-npu run: error: emulate_scatter_update: rejected under rules='doc': "
        "[size_limit] input_shape=(3000000000, 1) has 3000000000 elements"
    ) in err


def run_cli(*argv: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "indexops_npu", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize("command", ["plan", "check"])
def test_cli_huge_s_is_rejected_at_once(command):
    # listing the divisors of s = 2**40 by trial division up to s never ended
    done = run_cli(command, "--input", "64x8", "--index", "4x1099511627776", timeout=10)
    assert done.returncode == 2
    assert (
        f"indexops-npu {command}: error: {command}_scatter_update: rejected under rules='doc': "
        "[size_limit] src_shape=(4398046511104, 8) has 35184372088832 elements"
    ) in done.stderr


def test_cli_divisors_of_a_large_legal_s_come_at_once():
    s = 3 * 2**29
    done = run_cli(
        "check", "--input", f"{s}x1", "--index", f"1x{s}", "--dtype", "fp32",
        "--view", f"{s}x1", "--tile", "5x1", timeout=10,
    )  # fmt: skip
    assert done.returncode == 1
    divisors = [2**k * m for m in (1, 3) for k in range(30)]
    assert f"tileS must be a divisor of s={s}: one of {sorted(divisors)}" in done.stdout


def test_random_problem_is_a_decode_write():
    pytest.importorskip("ml_dtypes")  # the default problem is bf16
    input, index, src = random_problem(DEFAULT, seed=1, padding=0.0)
    assert input.shape == DEFAULT.input_shape and src.shape == (64, 2, 1, 576)
    assert (index[:, 1] == index[:, 0] + 1).all()  # consecutive slots per sequence
    assert len(np.unique(index // 128)) == 64  # one block each


def test_python_dash_m():
    done = subprocess.run(
        [sys.executable, "-m", "indexops_npu", "plan", "--top", "3"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "legal tilings" in done.stdout


def plan_lines(out):
    """(plan line, explanation line) pairs of ``indexops-npu plan``."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "legal tilings" in line) + 1
    body = lines[start:]
    return list(zip(body[::2], body[1::2]))


def test_cli_plan_top_says_why_each_plan_costs_what_it_does(capsys):
    argv = ["plan", "--input", "256x64", "--index", "25x4", "--dtype", "bf16"]
    assert main([*argv, "--index-dtype", "int32", "--top", "40"]) == 0
    out = capsys.readouterr().out
    pairs = plan_lines(out)
    assert "18 legal tilings; the best 18:" in out and len(pairs) == 18
    for plan, why in pairs:
        views = int(plan.split("views")[1].split()[0])
        tiles = int(plan.split("tiles")[1].split()[0])
        total = plan.split()[-2]
        assert why.strip().startswith(f"{views} view{'s' if views > 1 else ''}, ")
        assert f"+ {tiles} tiles in " in why and " wave" in why and "-bound: " in why
        assert why.endswith(f"= {total} us")
        if views > 1:
            assert f"{views - 1} x 4.38 us start-up" in why
        else:
            assert "no start-up" in why
    # the best is one view of 25 tiles; a 25-view plan of the same tiles costs far more
    assert pairs[0][0].split()[1] == "100x64" and "views     1" in pairs[0][0]


def test_cli_readme_demo_plans_and_runs_one_view(capsys):
    assert main(["plan", "--top", "1"]) == 0
    ((plan, why),) = plan_lines(capsys.readouterr().out)
    assert "views     1" in plan and why.strip().startswith("1 view, no start-up")
    pytest.importorskip("ml_dtypes")  # the default problem is bf16
    assert main(["run"]) == 0
    out = capsys.readouterr().out
    assert "tiling: view 64x2x1x576 (the best plan's), tile 16x2x1x576 (the best plan's)" in out


def test_cli_states_the_device_it_plans(capsys):
    assert main(["plan", "--top", "1", "--hardware", "a3"]) == 0
    out = capsys.readouterr().out
    assert "device: one die of 2: 48 of the package's 96 vector cores" in out
    assert main(["plan", "--top", "1"]) == 0
    assert "device: one device: 48 vector cores" in capsys.readouterr().out


CUT_PROBLEM = ["--input", "512x128x1x128", "--index", "4x4"]


def test_cli_check_says_what_it_checks_and_where_it_came_from(capsys):
    assert main(["check", *CUT_PROBLEM, "--tile", "1x2x1x128"]) == 0
    out = capsys.readouterr().out
    assert "tiling: view 4x4x1x128 (the best plan's), tile 1x2x1x128 (given)" in out
    assert "note:" not in out
    assert main(["check", *CUT_PROBLEM, "--view", "2x4x1x128", "--tile", "1x2x1x128"]) == 0
    assert "tiling: view 2x4x1x128 (given), tile 1x2x1x128 (given)" in capsys.readouterr().out


def test_cli_says_a_tile_larger_than_its_view_is_cut_to_it(capsys):
    # the 1x16 tile is checked (and run) as the 1x4 tokens of its view: 4*align(128*2) +
    # align(4*8) = 1056 UB bytes, not the 16-token tile's 4128
    assert main(["check", *CUT_PROBLEM, "--view", "1x4x1x128", "--tile", "1x16x1x128"]) == 0
    out = capsys.readouterr().out
    assert (
        "note: the tile of 1x16 tokens is larger than its view of 1x4: cut to 1x4 tokens, "
        "as the emulator runs it"
    ) in out
    assert "UB 1056 of 196608 bytes per tile" in out
    assert main(["run", *CUT_PROBLEM, "--dtype", "fp16", "--tile", "2x16x1x128"]) == 0
    out = capsys.readouterr().out
    assert "note: the tile of 2x16 tokens is larger than its view of 4x4: cut to 2x4" in out
    assert "result equals indexops.scatter_update: yes" in out


def test_cli_says_a_view_larger_than_the_index_is_cut_to_it(capsys):
    assert main(["check", *CUT_PROBLEM, "--view", "8x4x1x128", "--tile", "1x4x1x128"]) == 0
    out = capsys.readouterr().out
    assert "note: the view of 8x4 tokens is larger than the index 4x4: cut to 4x4 tokens" in out


@pytest.mark.parametrize("command", ["check", "plan", "run"])
def test_cli_help_shows_formats_and_defaults(capsys, command):
    with pytest.raises(SystemExit) as exit:
        main([command, "--help"])
    assert exit.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal
    for text in [
        "--input SHAPE input (cache) shape: [blockNum]x[blockSize]x1x[d], or [rows]x[d] "
        "(default: 512x128x1x576)",
        "--index BxS index shape [b]x[s]: b sequences of s tokens (default: 64x2)",
        "(default: bf16)",
        "of index: int64, int32, int16 (default: int64)",
        "a2 = Atlas A2 (Ascend 910B), 48 vector cores, 196608 B UB; a3 = Atlas A3",
        "(default: a2)",
        "doc = the documented contract; pypto-0.2.0 = what PyPTO 0.2.0's compiler accepts",
        "(default: doc)",
    ]:
        assert text in out
    assert "default: None" not in out
    if command != "plan":
        assert "TileShape, [tileS]x[d] or [tileB]x[tileS]x1x[d] (default: the best plan's)" in out


def test_cli_help_gives_examples_and_exit_status(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    examples = [
        line.split("  ")[1] for line in out.splitlines() if line.startswith("  indexops-npu ")
    ]
    assert len(examples) >= 4 and "exit status:" in out
    for example in examples:
        argv = example.split()[1:]
        if argv[0] != "<command>":  # each parses; those that neither run nor draw pass
            assert cli._parser()[0].parse_known_args(argv)[1] == []
            assert argv[0] == "run" or main(argv) == 0, example
    for command in ("check", "plan", "run"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert f"exit status: {cli.EXIT_STATUS[command]}, 2 a bad argument" in out
    assert "0 the tiling keeps every rule, 1 it breaks one" in cli.EXIT_STATUS["check"]


def test_cli_dtype_help_names_the_aliases_it_takes(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "NumPy's and PyPTO's names too (float32, bfloat16, DT_FP32, ...)" in out
    assert main(["check", "--dtype", "float32"]) == 0
    assert main(["check", "--dtype", "DT_FP32"]) == 0


def test_cli_version(capsys):
    import indexops

    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out == f"indexops-npu (indexops) {indexops.__version__}\n"


def test_cli_plan_plot_draws_the_ranked_plans(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    image = pytest.importorskip("PIL.Image")  # matplotlib's own dependency
    png = tmp_path / "plans.png"
    argv = ["plan", "--input", "256x64", "--index", "25x4", "--top", "5", "--plot", str(png)]
    assert main(argv) == 0
    assert f"plans drawn to {png}" in capsys.readouterr().out
    assert image.open(png).size[0] == 800  # read at a page's column width
