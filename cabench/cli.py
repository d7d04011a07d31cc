"""The ``cabench`` command line. It parses arguments and calls the library."""

import contextlib
import errno
import json
import math
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
import typer.core

from cabench.errors import CabenchError, Interrupted, os_reason
from cabench.jsonio import strict_dumps


class _Commands(typer.core.TyperGroup):
    """cabench's commands: a usage error (an unknown option, a value out of range, a missing argument) is one line
    naming the option and the command's help, with exit code 2, as every other error of bad input."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, windows_expand_args: bool = True, **extra: Any) -> Any:
        _state["said_interrupted"] = False
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except SystemExit as exc:  # typer ends a command whose standard output closed with a quiet exit 1, and
            # rich (the help) after a BrokenPipeError
            if exc.code != 1 or not (type(sys.stdout).__name__ == "PacifyFlushWrapper"
                                     or isinstance(exc.__context__, BrokenPipeError)):
                raise
            typer.echo("error: standard output: Broken pipe; the output is incomplete", err=True)  # (a pipe: no path)
            code = 2
        except typer.Abort:
            typer.echo("Aborted!", err=True)
            code = 1
        except OSError as exc:  # mostly writing the output: standard output on a full disk (files are in _guard)
            if _state["debug"]:
                traceback.print_exc()
            said = f"{exc.filename}: {exc.strerror or exc}" if exc.filename else \
                f"{_output_name()}: {exc.strerror or exc}; the output is incomplete"
            typer.echo(f"error: {said}", err=True)
            code = 2
        except Exception as exc:  # click's own errors (typer's click): a message and an exit code
            code = getattr(exc, "exit_code", None)
            if not (hasattr(exc, "format_message") and isinstance(code, int)):
                raise
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ != "NoArgsIsHelpError":  # that one has printed the help already
                see = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
                typer.echo(f"error: {exc.format_message()}{see}", err=True)
        if code == 130 and not _state["said_interrupted"]:  # typer ends a command a signal stopped before _guard
            typer.echo("interrupted", err=True)  # (while it loads what it needs) with a silent exit 130
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)


def _stdout_broken(exc: OSError) -> bool:
    """Whether ``exc`` was raised printing a line to standard output (a full disk, a closed pipe): it came from
    click's ``echo`` writing to standard output, not from writing a file."""
    tb, stdout = exc.__traceback__, sys.__stdout__
    while tb is not None and stdout is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "echo":
            with contextlib.suppress(AttributeError, OSError, ValueError):
                stream = frame.f_locals.get("file")
                if stream is not None and stream.fileno() == stdout.fileno():
                    return True
        tb = tb.tb_next
    return False


def _output_name() -> str:
    """Where standard output goes, for an error writing it: the file's path where the system says."""
    with contextlib.suppress(OSError, ValueError):
        target = os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}")
        if target.startswith("/"):
            return f"standard output ({target})"
    return "standard output"


def _between(lo: float, hi: float) -> dict[str, Any]:
    """An option's parser and metavar for a number in ``[lo, hi]``: NaN is said to be no number (typer's range check
    called it above the range)."""

    def shown(bound: float) -> str:  # 1000000 rather than 1e+06, as the option reads it back
        return f"{bound:.0f}" if bound >= 1e4 and bound.is_integer() else f"{bound:g}"

    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise typer.BadParameter(f"{value!r} is not a number; give one from {shown(lo)} to {shown(hi)}") from None
        if not lo <= number <= hi:  # NaN too
            said = "is not a number" if math.isnan(number) else "is out of range"
            raise typer.BadParameter(f"{value!r} {said}; give a number from {shown(lo)} to {shown(hi)}")
        return number

    return {"parser": parse, "metavar": f"[{shown(lo)}<=x<={shown(hi)}]"}


def _switches_shown_without_a_type() -> None:
    """A switch (``--all``, ``--force``) takes no value, but typer's help gives it a type (``--all <bool>``), which
    reads as ``--all true``: refused as an extra argument. The help shows switches without one (where typer has the
    hook; its other options keep theirs)."""
    typed = getattr(typer.core.TyperOption, "display_type_rich", None)
    if typed is None:
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) and not getattr(self, "metavar", None) else typed(self, ctx)

    typer.core.TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_switches_shown_without_a_type()
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, cls=_Commands,
                  help="Cost-aware multi-objective bandits for budgeted LLM configuration evaluation.")
data_app = typer.Typer(no_args_is_help=True, help="Inspect, plot and import evaluation logs.")
app.add_typer(data_app, name="data")

_state = {"debug": False, "said_interrupted": False}
T = TypeVar("T")


def _version(value: bool) -> None:
    if value:
        from cabench import __version__

        typer.echo(f"cabench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    _state["debug"] = debug


def _guard(action: Callable[[], T]) -> T:
    """Run ``action``; print a user error as one line and exit 2 (130 when interrupted)."""
    try:
        return action()
    except Interrupted as exc:
        typer.echo(str(exc), err=True)
        _state["said_interrupted"] = True
        raise typer.Exit(130) from None
    except CabenchError as exc:
        if _state["debug"]:
            traceback.print_exc()
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except OSError as exc:  # the environment: full or read-only disk, a path that is a folder, a long name
        if _state["debug"]:
            traceback.print_exc()
        if exc.errno == errno.ELOOP:  # (Python 3.13's pathlib, and opening such a path)
            _symlink_loop(exc.filename)
        if exc.filename is None and _stdout_broken(exc):  # a line the command printed: not a file of its own
            typer.echo(f"error: {_output_name()}: {exc.strerror or exc}; the command stopped there, keeping what it "
                       "had written (a run resumes from its saved cells)", err=True)
            raise typer.Exit(2) from None
        where = exc.filename or "output"
        typer.echo(f"error: {where}: {os_reason(exc)}; nothing already written was changed (check the "
                   "path, its permissions and free space)", err=True)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        _state["said_interrupted"] = True
        raise typer.Exit(130) from None
    except RuntimeError as exc:  # pathlib's resolve() before Python 3.13 says a loop of symbolic links so
        looped = exc.__context__
        if not isinstance(looped, OSError) or looped.errno != errno.ELOOP:
            raise
        if _state["debug"]:
            traceback.print_exc()
        _symlink_loop(looped.filename)


def _symlink_loop(path: object) -> NoReturn:
    """Say that ``path`` is a loop of symbolic links, in one line; exit 2."""
    path = "a path given" if path is None else ascii(str(path))[1:-1] if not str(path).isprintable() else path
    typer.echo(f"error: {path}: a loop of symbolic links (the link leads back to itself); point it at a file or "
               "folder; nothing already written was changed", err=True)
    raise typer.Exit(2) from None


def _largest(what: str, arms: list[str]) -> str:
    """`max-HV arm X`, or the configurations that share the largest value: with ties there is no one arm to name."""
    if len(arms) == 1:
        return f"{what} arm {arms[0]}"
    shown = ", ".join(arms[:3]) + (f" and {len(arms) - 3} more" if len(arms) > 3 else "")
    return f"{what}: {len(arms)} arms tie ({shown})"


def _tied_gap(gap: float) -> str:
    """Why Theorem 2's budget is infinite where it is: a gap of 0 (SPEC §6), a configuration tied with another."""
    return ("; a gap of 0 (a tie on some objective, as scored, decides whether a configuration is in the Pareto "
            "set): no budget is enough for Theorem 2's guarantee" if gap == 0 else "")


@data_app.command("describe")
def data_describe(
    path: Annotated[Path, typer.Argument(help="Dataset folder (logs.csv.gz + dataset.yaml; or its dataset.yaml), or "
                                              "an experiment config (YAML): its dataset on the config's split, "
                                              "objectives, cost and prices.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Table 1 statistics, profiling costs, Pareto sizes, gaps and Theorem 2 budgets of a dataset."""
    from cabench.data.dataset import load_dataset
    from cabench.data.describe import by_tie, describe
    from cabench.units import LABELS, fixed, plain

    def described() -> dict:
        from cabench.data.io import META_NAME

        if path.name == META_NAME and path.is_file():  # a dataset's own file: its folder
            return describe(load_dataset(path.parent))
        if not (path.is_file() and path.suffix.lower() in (".yaml", ".yml")):
            return describe(load_dataset(path))
        from cabench.config import load_config

        cfg = load_config(path)  # the dataset on the terms the experiment runs on, not only dataset.yaml's
        if cfg.dataset is None:
            raise CabenchError(f"{path}: dataset: a synthetic instance has no logs to describe")
        ds = load_dataset(cfg.dataset, cfg.split, cfg.terms, str(path))
        runs = len(cfg.arms.select(ds.configs, source=f"{path}: arms"))  # (the statistics are of every one)
        return {**describe(ds), **({"config_arms": runs} if runs < ds.n_arms else {})}

    d = _guard(described)
    if as_json:
        typer.echo(strict_dumps(d))
        return
    note = "SURROGATE logs (calibrated to the paper's published statistics, not real model outputs)" \
        if d["surrogate"] else "real logs"
    if d.get("surrogate_rows"):
        note += f": the rows of the surrogate logs of {d['surrogate_rows']}, whatever its dataset.yaml says"
    def span(name: str, form: str, label: str) -> str:  # a measurement's range, where the logs have it
        low, high = d[f"{name}_min"], d[f"{name}_max"]
        if low is None:
            return ""
        low_text, high_text = (fixed(low), fixed(high)) if form == "$" else (f"{low:{form}}", f"{high:{form}}")
        return f"   {label.split('|')[0]}{low_text}-{high_text}{label.split('|')[1]}"

    unit = LABELS[d["cost_unit"]]

    def cost(value: float) -> str:  # a cost or budget in the unit: dollars as written (0.00004, not 4e-05)
        return plain(value) if d["cost_unit"] == "usd" else f"{value:.4g}"

    tau = "" if d["tau5"] is None else f"   tau5 {d['tau5']:.3f} s   tau95 {d['tau95']:.3f} s"
    lines = [
        f"{d['name']}: {note}",
        f"  K {d['K']}{span('accuracy', '.3f', 'accuracy |')}{span('latency', '.3f', 'latency | s')}"
        f"{span('tokens', '.1f', 'tokens |')}{span('usd', '$', 'USD per call |')}   |P*| {d['pareto_size']}"
        f"{by_tie(d)}",
        f"  objectives {', '.join(d['objectives'])}   profiling cost c_i {cost(d['cost_min'])}-{cost(d['cost_max'])} "
        f"{unit}   c_max {cost(d['c_max'])}   lambda {d['lambda']:.4g}{tau}   clipped rows {d['clipped_rows']}",
        f"  {_largest('max-HV', d['max_hv_arms'])}   {_largest('max-HV-per-cost', d['max_nu_arms'])}",
        f"  full set: gaps min {d['full_min_gap']:.4f} median {d['full_median_gap']:.4f}   H {d['full_H']:.4g}   "
        f"L {d['full_L']:.3f}   "
        f"Theorem 2 from B = {cost(d['full_theorem2_budget_' + d['cost_unit']])} {unit} "
        f"(rho {d['full_theorem2_rho']:.4g}){_tied_gap(d['full_min_gap'])}" if d["K"] > 1 else  # (no other arm:
        # infinite gaps, nothing to spend)
        "  full set: one configuration, so nothing to identify or choose between (experiments need at least 2)",
    ]
    if d["subset_K"]:
        lines.append(
            f"  14-arm subset: |P*| {d['subset_pareto_size']}   min gap {d['subset_min_gap']:.4f}   H "
            f"{d['subset_H']:.4g}   L {d['subset_L']:.3f}   Theorem 2 from B = "
            f"{cost(d['subset_theorem2_budget_' + d['cost_unit']])} {unit} (rho {d['subset_theorem2_rho']:.4g})"
            f"{_tied_gap(d['subset_min_gap'])}")
        lines.append("    gaps: " + ", ".join(f"{a} {g:.4f}" for a, g in sorted(d["subset_gaps"].items(),
                                                                                   key=lambda item: item[1])))
    if d.get("config_arms"):
        lines.append(f"  note: the config runs {d['config_arms']} of these {d['K']} configurations (arms); the "
                     "statistics above are of all of them")
    typer.echo("\n".join(lines))


@data_app.command("landscape")
def data_landscape(
    paths: Annotated[list[Path], typer.Argument(help="Dataset folder(s): one panel each.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Image file (.png, .pdf or .svg).")],
    force: Annotated[bool, typer.Option("--force", help="Replace an image cabench did not draw.")] = False,
) -> None:
    """Draw Figure 1: accuracy against efficiency per configuration, the Pareto front labelled."""
    from cabench.data.dataset import load_dataset
    from cabench.figure_index import drawn_by_cabench
    from cabench.plots import FORMATS, landscape_figure, save

    def act() -> list[Path]:
        if not output.name or output.name in (".", "..") or output.is_dir():
            raise CabenchError(f"-o {output}: give an image file's name (.png, .pdf or .svg), not a folder")
        fmt = output.suffix.lstrip(".").lower() or "png"
        if fmt not in FORMATS:
            raise CabenchError(f"-o {output}: the file name must end in one of "
                               f"{', '.join('.' + f for f in FORMATS)} (or have no ending, for .png)")
        target = output.with_suffix(f".{fmt}")
        if target.is_file() and not force and not drawn_by_cabench(target, target.parent, {}):
            raise CabenchError(f"{target}: exists and is not an image cabench drew; nothing was written (--force "
                               "replaces it)")
        datasets = [load_dataset(p) for p in paths]
        output.parent.mkdir(parents=True, exist_ok=True)
        return save(landscape_figure(datasets), target, [fmt])
    for path in _guard(act):
        typer.echo(f"wrote {path}")


@data_app.command("table1")
def data_table1(
    paths: Annotated[list[Path], typer.Argument(help="Dataset folder(s): one row each.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="CSV file to write.")],
    force: Annotated[bool, typer.Option("--force", help="Replace a file that is not a Table 1 cabench wrote.")
                     ] = False,
) -> None:
    """Write Table 1 (K, accuracy, latency and token ranges, |P*|) of the datasets as CSV."""
    from cabench.data.dataset import load_dataset
    from cabench.data.describe import table1
    from cabench.storage import edited_table, table_record, to_csv, write_table

    def act() -> Any:
        if not output.name or output.name in (".", "..") or output.is_dir():
            raise CabenchError(f"-o {output}: give a CSV file's name, not a folder")
        frame = table1([load_dataset(p) for p in paths])
        text = to_csv(frame)
        if output.is_file() and not force and not _same_first_line(output, text):
            raise CabenchError(f"{output}: exists and is not a Table 1 cabench wrote (its header differs); nothing "
                               "was written (--force replaces it)")
        if output.is_file() and not force and output.read_bytes() != text.encode() and edited_table(output):
            raise CabenchError(f"{output}: edited since cabench wrote it (its SHA-256 no longer matches "
                               f"{table_record(output).name}); nothing was written (--force replaces it)")
        output.parent.mkdir(parents=True, exist_ok=True)
        write_table(output, text)
        return frame
    typer.echo(_guard(act).to_string(index=False))
    typer.echo(f"wrote {output}")


def _same_first_line(path: Path, text: str) -> bool:
    """Whether the file at ``path`` begins with the first line of ``text`` (a table of the same columns)."""
    head = text.partition("\n")[0].encode()
    try:
        with path.open("rb") as f:
            return f.read(len(head) + 1) in (head + b"\n", head + b"\r")
    except OSError:
        return False


@data_app.command("import")
def data_import(
    source: Annotated[Path, typer.Argument(help="Your logs: a CSV or JSONL file (plain, .gz, .bz2, .xz, .zst or a .zip "
                                                "of it), a parquet file, or a tool's results folder (--format).")],
    out: Annotated[Path, typer.Option("--out", help="Dataset folder to create.")],
    mapping: Annotated[Path | None, typer.Option(
        "--mapping", help="YAML renaming or summing source columns, keeping extra ones, adding constants and "
                          "scales (canonical names need none).")
    ] = None,
    settings: Annotated[list[str] | None, typer.Option(
        "--set", help="Metadata the source lacks, e.g. --set prompting=cot: a constant column, or the empty cells "
                      "of one it has (repeatable).")] = None,
    overrides: Annotated[list[str] | None, typer.Option(
        "--override", help="Replace a column whatever the source recorded, e.g. --override temperature=0 "
                           "(repeatable).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing dataset folder (atomically).")] = False,
    fmt: Annotated[str, typer.Option("--format", help="canonical (a CSV, CSV.gz, JSONL or parquet table), bfcl, "
                                                      "helm, inspect, promptfoo or every-eval-ever.")] = "canonical",
    missing: Annotated[str, typer.Option("--missing", help="When configurations have different instances: error, "
                                                          "drop-instances or drop-configs.")] = "error",
    failed: Annotated[str, typer.Option("--failed", help="Failed calls (API errors, timeouts) in a tool's logs: "
                                                        "incorrect (score 0) or drop (leave a hole).")] = "incorrect",
    metric: Annotated[str | None, typer.Option(
        "--metric", help="The score to read, NAME or NAME.KEY (one key of a score holding several): a HELM stat, an "
                         "Inspect scorer, an Every Eval Ever evaluation_result_id (NAME.score: its score).")] = None,
    split: Annotated[str | None, typer.Option(
        "--split", help="HELM instances of the test split (default), valid or all.")] = None,
    repeats: Annotated[str, typer.Option(
        "--repeats", help="A configuration run more than once on an instance: refuse, latest, first or epochs "
                          "(each run an instance <id>#k).")] = "refuse",
    unmeasured: Annotated[str, typer.Option(
        "--unmeasured", help="Rows without a score, or with a latency or token count empty or 0: drop (leave a "
                             "hole) or refuse.")] = "drop",
) -> None:
    """Turn your own logs, or a tool's results, into a canonical dataset folder, validated like the loader."""
    from cabench.data.importer import import_logs, parse_settings, unloadable

    folder = _guard(lambda: import_logs(
        source, mapping, out, force, parse_settings(settings or []), fmt, missing, failed, metric, echo=typer.echo,
        overrides=parse_settings(overrides or [], "--override"), split=split, repeats=repeats,
        unmeasured=unmeasured))
    typer.echo(f"wrote {folder}")
    why = unloadable(folder)
    if why:  # the dataset is kept: other objectives or a larger split, declared in its dataset.yaml, may serve
        typer.echo(f"warning: describe and run will refuse it as declared: {why}", err=True)


def _overrides(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _number_list(text: str | None, flag: str) -> list[float] | None:
    if text is None:
        return None
    items = text.split(",")
    try:  # every item a number as written (an empty item, or 1_0 read as 10, was taken silently)
        values = [float(v) for v in items if "_" not in v]
    except ValueError:
        values = []
    if len(values) != len(items) and any(v.strip() for v in items):
        raise CabenchError(f"{flag}: expected comma-separated numbers, got '{text}'")
    if not values:
        raise CabenchError(f"{flag}: give at least one number")
    return [int(v) if v.is_integer() else v for v in values]


def _budget_option(text: str | None) -> dict[str, list[float]] | None:
    """``--budget usd=0.5,1`` (a unit, then the budgets) as a config's ``budget`` mapping; one budget also as
    ``advise`` takes it (``5usd``, ``$5``, ``2e6tokens``)."""
    from cabench.advise_plan import parse_budget

    if text is None:
        return None
    unit, sep, values = text.partition("=")
    if not sep:
        try:
            one = parse_budget(text.strip())
        except CabenchError as exc:  # what is wrong with the amount (-5usd, 1e400usd), else both forms
            said = str(exc)
            if said.startswith(f"--budget {text.strip()}: expected an amount and a unit"):
                hint = said.partition("; did you mean")  # (5tokns: did you mean 'tokens'?)
                said = (f"--budget {text}: expected UNIT=VALUES or one amount with its unit, e.g. --budget "
                        f"usd=0.5,2, --budget tokens=100000 or --budget 5usd{hint[1]}{hint[2]}")
            raise CabenchError(said) from None
        return {one.unit: [int(one.value) if one.value.is_integer() else one.value]}
    if not unit.strip():
        raise CabenchError(f"--budget {text}: expected UNIT=VALUES, e.g. --budget usd=0.5,2 or --budget tokens=100000")
    items = [v.strip() for v in values.split(",")]
    grouped = [bool(re.fullmatch(r"0\d+(\.\d*)?", v)) for v in items]  # 1,000, 1,050.5, 1,00: digits after a 0
    if any(grouped[1:]):
        merged: list[str] = []
        for item, group in zip(items, grouped):
            if group and merged:
                merged[-1] += item
            else:
                merged.append(item)
        thousands = all(re.fullmatch(r"0\d\d(\.\d*)?", v) for v, g in zip(items[1:], grouped[1:]) if g)
        fix = f"{unit.strip()}={','.join(merged)}" if thousands else "a point, not a comma, before decimals"
        raise CabenchError(f"--budget {text}: commas separate budgets, so this reads as {', '.join(items)}; write "
                           f"each budget without a comma in it ({fix})")
    return {unit.strip().lower(): _number_list(values, "--budget") or []}  # (USD=5 as 5USD is read)


def _name_list(text: str | None, flag: str) -> list[str] | None:
    if text is None:
        return None
    names = [v.strip() for v in text.split(",") if v.strip()]
    if not names:
        raise CabenchError(f"{flag}: give at least one method name")
    return names


@app.command("run")
def run(
    configs: Annotated[list[Path], typer.Argument(help="Experiment config(s) (YAML), run one after another.")],
    name: Annotated[str | None, typer.Option("--name", help="Experiment name (overrides 'name').")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Stream seed (overrides 'seed').")] = None,
    repetitions: Annotated[int | None, typer.Option("--repetitions", help="Paired repetitions.")] = None,
    rho: Annotated[str | None, typer.Option("--rho", help="Budget grid, e.g. 2,8,32 (overrides 'rho').")] = None,
    budget: Annotated[str | None, typer.Option(
        "--budget", help="Budgets in the cost unit, e.g. usd=0.5,2, tokens=100000 or one as 5usd (overrides 'rho' "
                         "and 'budget').")
    ] = None,
    methods: Annotated[str | None, typer.Option("--methods", help="Methods, e.g. cohv-ucb,uniform.")] = None,
    n_jobs: Annotated[int | None, typer.Option("--n-jobs", help="Workers (-1: all cores).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (overrides 'output').")] = None,
    backend: Annotated[str | None, typer.Option("--backend", help="loky, threading, sequential or dask.")] = None,
    chunk_size: Annotated[int | None, typer.Option("--chunk-size", help="Repetitions per cell.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Recompute every cell.")] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Replace the results of the same experiment name "
                                                            "run with another config (shared cells are reused).")
                       ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar or summary.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Refuse a budget too small for a method instead of "
                                                          "skipping that (method, rho).")] = False,
) -> None:
    """Run (or resume) experiments: cells on the chosen backend into runs.csv, summary.csv, arms.csv, dataset.csv,
    selections.csv.gz and config.yaml (and trajectories.csv where the config asks for trajectories)."""
    from functools import partial

    from cabench.config import load_config
    from cabench.runner import run_experiment
    from cabench.summaries import format_summary

    def load(config: Path):
        for flag, value in (("--out", out), ("--name", name)):
            if value is not None and len(configs) > 1:
                raise CabenchError(f"{flag}: give one config with {flag}, or let each config name its own")
        given = _overrides(n_jobs=n_jobs, output=str(out) if out else None, backend=backend, chunk_size=chunk_size,
                           name=name, seed=seed, repetitions=repetitions, rho=_number_list(rho, "--rho"),
                           budget=_budget_option(budget), methods=_name_list(methods, "--methods"))
        if rho is not None and budget is not None:
            raise CabenchError("--rho, --budget: give one budget grid")
        return load_config(config, given)

    loaded = _guard(lambda: _own_folders([load(c) for c in configs]))  # every config is checked before any runs
    for cfg in loaded:
        outcome = _guard(partial(run_experiment, cfg, force=force, replace=replace, quiet=quiet, echo=typer.echo,
                                 strict=strict))
        if not quiet:
            typer.echo(format_summary(outcome.summary, outcome.cost_unit))
            typer.echo(f"wrote {outcome.output / 'runs.csv'}" if outcome.written else
                       f"{outcome.output}: up to date, nothing written (every cell reused, the result files built "
                       "from them unchanged)")


def _own_folders(loaded: list[Any]) -> list[Any]:
    """The configs of one ``run``, refused in one line before any runs where two write one results folder: the
    second was refused (or replaced the first's results) only after the first had run."""
    seen: dict[Path, Any] = {}
    for cfg in loaded:
        other = seen.setdefault(Path(os.path.abspath(cfg.output)), cfg)
        if other is not cfg:
            raise CabenchError(f"{cfg.source}: output {cfg.output} is also the folder of {other.source}, run before it "
                               "by this command; give each config its own output")
    return loaded


@app.command("tune")
def tune(
    config: Annotated[Path, typer.Argument(help="Online experiment config (YAML).")],
    n_jobs: Annotated[int | None, typer.Option("--n-jobs", help="Workers (-1: all cores).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (overrides 'output').")] = None,
    backend: Annotated[str | None, typer.Option("--backend", help="loky, threading, sequential or dask.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Profiling-only grid search over (s_r, s_c, eta) (Appendix A); writes tune.csv and tune.yaml."""
    from cabench import registry
    from cabench.config import load_config
    from cabench.methods.configured import OnlineMethod
    from cabench.tune import run_tuning, tied_at_best, tuned_method

    def act():
        cfg = load_config(config, _overrides(n_jobs=n_jobs, output=str(out) if out else None, backend=backend))
        return cfg, run_tuning(cfg, quiet=quiet)

    cfg, (table, best, folder, surrogate) = _guard(act)
    tuned = registry.proposed("online")
    typer.echo(table.to_string(index=False))
    if surrogate:
        from cabench.paper import SURROGATE_NOTE

        typer.echo(f"scored on {SURROGATE_NOTE}")
    typer.echo(f"chosen for {registry.display(tuned)}: s_r={best['s_r']:g} s_c={best['s_c']:g} eta={best['eta']:g} "
               f"(written to {folder})")
    tied = tied_at_best(table)
    if tied > 1:  # the grid's order chose, not the profiling rows
        every = "every setting scores" if tied == len(table) else f"{tied} of the {len(table)} settings score"
        score = float(table["mean_regret_hv"].iloc[0])
        typer.echo(f"note: {every} the same mean R_HV ({score:g}): the profiling rows tell them apart by none of "
                   "their pulls, so the first in the table's order (smallest s_r, s_c, eta) is named; more profiling "
                   "instances, or tune.rho, may separate them")
    alpha = tuned_method(cfg).alpha  # scored at the config's alpha: a pasted entry keeps it
    kept = f", alpha: {alpha:g}" if alpha != OnlineMethod(tuned).alpha else ""
    typer.echo(f"run uses the parameters its config gives: to run with these, write them in {config}'s methods, "
               f"e.g. - {{name: {tuned}, s_r: {best['s_r']:g}, s_c: {best['s_c']:g}, eta: {best['eta']:g}{kept}}}")
    others = [registry.display(m.name) for m in cfg.methods if m.name != tuned and registry.spec(m.name).tunable]
    if others:  # methods of the config with parameters of their own, which the grid did not score
        typer.echo(f"tune chooses {registry.display(tuned)}'s parameters only; {', '.join(others)} "
                   f"{'runs' if len(others) == 1 else 'run'} with the parameters the config gives")


@app.command("plan")
def plan(
    config: Annotated[Path, typer.Argument(help="Experiment config (YAML): its dataset, arms, setting and methods.")],
    targets: Annotated[list[str], typer.Option(
        "--target", help="error<=D or f1>=F (identification), share>=S (online); repeatable.")],
    draws: Annotated[int, typer.Option("--draws", min=1, help="Problems drawn from what the profiling split "
                                                              "leaves uncertain.")] = 20,
    repetitions: Annotated[int, typer.Option("--repetitions", min=1, help="Repetitions per draw and budget.")] = 50,
    epsilon: Annotated[float, typer.Option(
        "--epsilon", **_between(0.0, 1.0),
        help="share: a configuration counts when its nu is within this relative shortfall of the best.")] = 0.05,
    confidence: Annotated[float, typer.Option(
        "--confidence", **_between(0.01, 0.99),
        help="Quantile of the draws' needs (over their median) that scales the extrapolated level: higher plans more. "
             "Not the share of draws meeting the target at the plan (docs/methods.md).")] = 0.8,
    max_share: Annotated[float, typer.Option(
        "--max-share", **_between(1e-3, 1e6),
        help="Largest budget, in multiples of the exhaustive evaluation's cost.")] = 10.0,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="Seed of the draws and streams (default: the "
                                                                   "config's).")] = None,
    n_jobs: Annotated[int | None, typer.Option("--n-jobs", help="Workers (-1: all cores).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Folder of plan.csv, plan_curves.csv and plan.png "
                                                           "(default: beside the config's output, <name>_plan).")
                   ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace a plan asked otherwise (other targets, settings "
                                                        "or config) in the folder.")] = False,
) -> None:
    """Plan the budget each method needs to reach a target, from the profiling split alone; print the table."""
    from cabench.budget_plan import PlanSpec, check_plan_folder, config_plan_key, format_plan, plan_config, write_plan
    from cabench.config import load_config
    from cabench.planning.targets import parse_target

    def act():
        cfg = load_config(config, _overrides(n_jobs=n_jobs))
        spec = PlanSpec(tuple(dict.fromkeys(parse_target(t, cfg.setting) for t in targets)), draws, repetitions,
                        cfg.seed if seed is None else seed, epsilon, confidence, max_share=max_share)
        folder = out or Path(cfg.output).parent / f"{cfg.name}_plan"
        key = config_plan_key(cfg, spec)
        check_plan_folder(folder, key, force)  # before any work
        found = plan_config(cfg, spec, quiet)
        return found, write_plan(found, folder, key, force)

    found, written = _guard(act)
    typer.echo(format_plan(found))
    for path in written:
        typer.echo(f"wrote {path}")


@app.command("plot")
def plot(
    results: Annotated[Path, typer.Argument(help="Folder searched for result files.")],
    fmt: Annotated[str, typer.Option("--format", help="Comma-separated image formats.")] = "png,pdf",
    n_jobs: Annotated[int, typer.Option("--n-jobs", help="Processes drawing figures (-1: all cores).")] = 1,
) -> None:
    """Draw every experiment's figures into RESULTS/figures/, and the paper's Figures 1-6 for its experiments;
    only figures whose result files or drawing code changed are drawn again."""
    from cabench.plots import plot as draw_figures

    def drawn():
        if n_jobs == 0 or n_jobs < -1:  # as a config's n_jobs is checked
            raise CabenchError(f"--n-jobs {n_jobs}: must be a positive number of processes, or -1 for all cores")
        return draw_figures(results, [f.strip() for f in fmt.split(",") if f.strip()], n_jobs)

    done = _guard(drawn)
    for path in done.written:
        typer.echo(f"wrote {path}")
    typer.echo(done.message())


#: The help of --require (recommend, report).
REQUIRE_HELP = ("A requirement per call, e.g. accuracy>=0.6, latency<=2s (or ms), usd<=0.002, tokens<=300, or an "
                "objective's normalised mean (efficiency>=0.5); repeatable.")


@app.command("recommend")
def recommend_cmd(
    results: Annotated[Path, typer.Argument(help="Folder searched for result files.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    top: Annotated[int, typer.Option("--top", min=1, help="Configurations listed per identification row.")] = 10,
    every: Annotated[bool, typer.Option("--all", help="Every method, budget and cost mode, not only the decision.")
                     ] = False,
    require: Annotated[list[str] | None, typer.Option(
        "--require", help=REQUIRE_HELP)] = None,
) -> None:
    """The configuration (online) or Pareto set (identification) to pay for, by name, with its real units; with
    --require, the one among the configurations that satisfy the requirements and how often each method found it."""
    from cabench.constraints import parse_constraints
    from cabench.recommend import format_decisions, format_recommendations, recommend, recommendations_json
    from cabench.results import unfinished_below, unfinished_note

    items = _guard(lambda: recommend(results, parse_constraints(require or [])))
    if as_json:
        typer.echo(recommendations_json(items))
    else:
        typer.echo(format_recommendations(items, top) if every else format_decisions(items))
    note = unfinished_note(results, unfinished_below(results))
    if note:
        typer.echo(note, err=True)  # standard error: --json stays one document


@app.command("report")
def report(
    results: Annotated[Path, typer.Argument(help="Folder searched for result files.")],
    require: Annotated[list[str] | None, typer.Option(
        "--require", help=REQUIRE_HELP)] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a REPORT.md or REPORT.html that cabench did not "
                                                        "write, or that was edited since it did (refused "
                                                        "otherwise).")] = False,
) -> None:
    """Write REPORT.md and REPORT.html: a scorecard of the claims tested, then each experiment's decision,
    summary, paired comparisons and verdicts; the paper's numbers beside its own experiments. With --require, each
    experiment also answers among the configurations that satisfy the requirements, and says how often each method
    found that answer."""
    from cabench.constraints import parse_constraints
    from cabench.html_report import write_reports

    md, html = _guard(lambda: write_reports(results, parse_constraints(require or []), force))
    typer.echo(f"wrote {md} and {html}")


@app.command("advise")
def advise_cmd(
    logs: Annotated[Path, typer.Argument(help="Your logs (a table, a tool's results with --format) or a dataset "
                                              "folder.")],
    budget: Annotated[str | None, typer.Option("--budget", help="The whole evaluation's budget in the cost unit: "
                                                                "2e6tokens, 5usd, $5 or 300completion_tokens.")
                      ] = None,
    targets: Annotated[list[str] | None, typer.Option(
        "--target", help="Instead of --budget: plan it from the profiling split to reach error<=D or f1>=F "
                         "(identification) or share>=S (online), and spend it; repeatable.")] = None,
    mapping: Annotated[Path | None, typer.Option("--mapping", help="YAML mapping your columns (as data import).")
                       ] = None,
    fmt: Annotated[str, typer.Option("--format", help="canonical, bfcl, helm, inspect, promptfoo or "
                                                      "every-eval-ever (as data import).")] = "canonical",
    settings: Annotated[list[str] | None, typer.Option("--set", help="A constant column, e.g. --set prompting=cot "
                                                                     "(repeatable; as data import).")] = None,
    missing: Annotated[str, typer.Option("--missing", help="error, drop-instances or drop-configs (as data "
                                                          "import).")] = "error",
    repeats: Annotated[str, typer.Option("--repeats", help="A configuration run twice on an instance: refuse, "
                                                          "latest, first or epochs (as data import).")] = "refuse",
    metric: Annotated[str | None, typer.Option("--metric", help="The score to read when the logs have several, "
                                                               "NAME or NAME.KEY (as data import).")] = None,
    objectives: Annotated[str | None, typer.Option(
        "--objectives", help="2 to 4 of accuracy, latency, cost, efficiency (default: the dataset's, else "
                             "accuracy,latency,cost).")] = None,
    cost: Annotated[str | None, typer.Option("--cost", help="tokens, completion_tokens or usd (default: the "
                                                            "dataset's, else usd with prices or cost_usd, else "
                                                            "tokens).")] = None,
    prices: Annotated[Path | None, typer.Option("--prices", help="YAML {model or pattern: {input: $/1M, output: "
                                                                 "$/1M}} (or one blended rate, {tokens: $/1M}), "
                                                                 "or an experiment config declaring prices.")] = None,
    methods: Annotated[str | None, typer.Option("--methods", help="Methods instead of CoHV-UCB and CoPSI-R, e.g. "
                                                                  "cohv-ucb,copsi-r,uniform.")] = None,
    repetitions: Annotated[int, typer.Option("--repetitions", min=1, help="Paired repetitions.")] = 50,
    out: Annotated[Path, typer.Option("--out", help="Folder of the data, results and report.")] = Path("advice"),
    name: Annotated[str | None, typer.Option("--name", help="The experiments' and plans' names begin with it "
                                                            "(default: the dataset's name); they end with the "
                                                            "setting (and the budget).")
                    ] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Replace the dataset, results or plans an earlier "
                                                            "advise left in --out with other logs or options.")
                       ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress.")] = False,
) -> None:
    """Import, describe, run the recommended methods at your budget (or at the budget planned to reach your targets),
    write the report; print the decision."""
    from cabench.advise import Request, advise, format_advice
    from cabench.advise_plan import parse_budget
    from cabench.data.importer import parse_settings

    def act():
        names = tuple(v.strip() for v in objectives.split(",")) if objectives is not None else ()
        request = Request(logs, None if budget is None else parse_budget(budget), out, mapping, fmt,
                          parse_settings(settings or []), missing, repeats, metric, names, cost, prices,
                          tuple(_name_list(methods, "--methods") or ()), repetitions, replace, name,
                          tuple(targets or ()))
        return advise(request, lambda line: typer.echo(line, err=True), quiet)

    typer.echo(format_advice(_guard(act)))


@app.command("serve")
def serve(
    dataset: Annotated[Path, typer.Argument(help="Dataset folder whose logged configurations answer.")],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: a free one, printed).")] = 8000,
    latency_scale: Annotated[float, typer.Option("--latency-scale", help="Answer after latency x this.")] = 0.0,
    fail_rate: Annotated[str | None, typer.Option(
        "--fail-rate", help="Injected faults, e.g. 429=0.2,500=0.05,timeout=0.01.")] = None,
    hold_s: Annotated[float, typer.Option("--hold-s", help="How long an injected timeout holds a request.")] = 30.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the injected faults.")] = 0,
) -> None:
    """Answer OpenAI-compatible chat completions as the dataset's logged configurations did (replay task)."""
    from cabench.live.serve import ReplayEndpoint, make_server, parse_faults
    from cabench.paper import SURROGATE_NOTE

    def start():
        endpoint = ReplayEndpoint.load(dataset, latency_scale=latency_scale, faults=parse_faults(fail_rate),
                                       hold_s=hold_s, seed=seed)
        return endpoint, make_server(endpoint, host, port)

    endpoint, server = _guard(start)
    address = f"http://{server.server_address[0]}:{server.server_address[1]}/v1"
    try:  # a stop asked for as soon as the address is said ends the server as one asked for later does: exit 0
        typer.echo(f"serving {dataset} at {address} (Ctrl-C to stop)", err=True)
        if endpoint.surrogate:  # its answers are the logs', so their label too
            typer.echo(f"{dataset}: {SURROGATE_NOTE}; its answers are not real model outputs", err=True)
        sys.stderr.flush()
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _replayed_surrogate(cfg: Any) -> str:
    """The line saying a live or collect run's answers were replayed from surrogate logs."""
    from cabench.paper import SURROGATE_NOTE

    return (f"the endpoint replayed the SURROGATE logs of {cfg.task['dataset']}: {SURROGATE_NOTE}, not real model "
            "outputs")


BaseUrl = Annotated[str | None, typer.Option("--base-url", help="Endpoint URL, overriding the config's.")]
NoBar = Annotated[bool, typer.Option("--quiet", help="No progress bar.")]


def _session(config: Path, out: Path, base_url: str | None, quiet: bool, collect: bool) -> tuple[Any, dict]:
    """Load a live or collect config (``--base-url`` overriding its endpoint) and run it into ``out``."""
    from cabench.live.config import load_live
    from cabench.live.session import run_session

    def act():
        if base_url is not None and not base_url.strip():  # an unset shell variable: never the config's endpoint
            raise CabenchError("--base-url: empty (an unset variable?); give the endpoint's URL, or leave the option "
                               "out to call the config's")
        cfg = load_live(config, {"base_url": base_url} if base_url else None, collect=collect)
        return cfg, run_session(cfg, out, quiet=quiet, collect=collect)

    return _guard(act)


@app.command("live")
def live(
    config: Annotated[Path, typer.Argument(help="Live config YAML (configs/live/).")],
    out: Annotated[Path, typer.Option("--out", help="Folder of the run (re-run the same command to resume).")],
    base_url: BaseUrl = None,
    quiet: NoBar = False,
) -> None:
    """Run a method against a live endpoint under a hard budget; resumable; writes logs, spend, decision."""
    from cabench.units import amount

    cfg, spend = _session(config, out, base_url, quiet, collect=False)
    decision = json.loads((out / "decision.json").read_text())
    chosen = decision.get("configuration") or ", ".join(decision.get("pareto_set", []))
    if decision.get("tied"):  # evaluated most, equally often: the run does not choose between them
        chosen = f"none chosen: {', '.join(decision['tied'])} were evaluated most, equally often"
    unit = spend["cost_unit"]
    tokens = "" if unit == "tokens" else f" ({spend['spent_tokens']:,.0f} tokens)"
    typer.echo(f"{cfg.name}: spent {amount(spend[f'spent_{unit}'], unit)}{tokens} of "
               f"{amount(spend[f'budget_{unit}'], unit)} ({amount(spend[f'profiling_{unit}'], unit)} profiling) in "
               f"{spend['calls'] + spend.get('failed_calls', 0)} calls ({spend.get('failed_calls', 0)} without an "
               "outcome), "
               f"{spend['failed_attempts']} failed attempts; stopped by {_stop_reason(spend)}")
    typer.echo(f"{'configuration' if cfg.setting == 'online' else 'Pareto set'}: {chosen}")
    unpulled = decision.get("unpulled") or []
    if unpulled:  # the budget ran out within the method's first round: it chose among the others
        what = "evaluated" if cfg.setting == "online" else "sampled"
        typer.echo(f"note: the budget ran out before the method {what} {len(unpulled)} of "
                   f"{len(cfg.configurations)} configurations on any evaluation instance ({', '.join(unpulled)}); "
                   f"the {'choice' if cfg.setting == 'online' else 'set'} is among the others; a larger budget "
                   "evaluates them")
    if decision.get("surrogate"):
        typer.echo(_replayed_surrogate(cfg))
    typer.echo(f"wrote {out}")


def _stop_reason(spend: dict) -> str:
    """Why a live run stopped, as its summary line says it."""
    if spend["stopped_by"] == "call limit":
        return (f"the call limit ({spend['call_limit']:,} method calls, twice what the budget buys at the cheapest "
                "profiling call's cost: the endpoint's calls were costing next to nothing)")
    return str(spend["stopped_by"])


@app.command("collect")
def collect(
    config: Annotated[Path, typer.Argument(help="Config YAML naming a task, an endpoint and configurations.")],
    out: Annotated[Path, typer.Option("--out", help="Dataset folder to write (re-run to resume).")],
    base_url: BaseUrl = None,
    quiet: NoBar = False,
) -> None:
    """Evaluate every configuration on the task's instances (or a sample) into a dataset folder."""
    from cabench.data.io import read_metadata

    cfg, spend = _session(config, out, base_url, quiet, collect=True)
    typer.echo(f"{spend['calls']} calls, {spend['spent_tokens']:.0f} tokens, {spend['failed_calls']} failed calls")
    if _guard(lambda: read_metadata(out)).get("surrogate") is True:
        typer.echo(_replayed_surrogate(cfg))
    typer.echo(f"wrote {out}")


def main() -> None:
    import signal

    from cabench.interrupts import handling

    argv = sys.argv[1:]
    if "--debug" in argv[1:]:  # --debug is accepted after the subcommand too
        argv = ["--debug", *[a for a in argv if a != "--debug"]]
    # SIGTERM ends a command as Ctrl-C does (workers stopped, finished cells kept); either waits for a compiled kernel
    # running in this process to return (cabench.interrupts). Past the command, a SIGTERM just ends the process.
    with handling(signal.SIGINT, signal.SIGTERM):
        app(args=argv, prog_name="cabench")


if __name__ == "__main__":
    main()
