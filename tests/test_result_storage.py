"""How results are stored: per-arm tables as gzip CSV that decompresses to exactly the plain CSV, folders of the
previous (plain) format still read, a fully cached re-run that rewrites nothing, and the space it saves."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from cabench.cells import run_cell
from cabench.config import parse_config
from cabench.plan import build_problem, plan_cells, with_budgets
from cabench.results import ResultSet
from cabench.runner import run_experiment
from tests.conftest import DATA

ONLINE = {"name": "s_online", "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2, 4],
          "methods": ["cohv-ucb", "uniform"], "repetitions": 6, "chunk_size": 3, "backend": "sequential",
          "trajectories": {"rho": 4, "points": 20}}
PSI = {"name": "s_psi", "dataset": str(DATA / "piqa"), "setting": "psi", "arms": {"preset": "paper-subset"},
       "rho": [20, 100], "methods": ["copsi", "uniform"], "cost_modes": ["deterministic", "stochastic"],
       "repetitions": 8, "chunk_size": 4, "backend": "sequential"}


def _config(raw: dict, out: Path):
    return parse_config({**raw, "output": str(out)}, "s.yaml")


def _run(raw: dict, out: Path):
    return run_experiment(_config(raw, out), quiet=True)


@pytest.fixture(scope="module", params=[ONLINE, PSI], ids=["online", "psi"])
def finished(request, tmp_path_factory) -> tuple[dict, Path]:
    """A finished experiment (online with trajectories, identification with two cost modes) and its folder."""
    out = tmp_path_factory.mktemp("stored") / request.param["name"]
    _run(request.param, out)
    return request.param, out


def _plain_selections(raw: dict, out: Path) -> bytes:
    """``selections.csv`` as the plain writer made it: every cell's selection rows, computed afresh, in plan
    order, the experiment's name and config hash first, written by pandas as CSV."""
    cfg = _config(raw, out)
    problem, _, _ = build_problem(cfg)
    cfg = with_budgets(cfg, problem)
    frames = [run_cell(problem, cfg.setting, cfg.seed, cell)[1] for cell in plan_cells(cfg)]
    table = pd.concat(frames, ignore_index=True)
    chash = pd.read_csv(out / "runs.csv", dtype=str)["config_hash"].iloc[0]
    table.insert(0, "config_hash", chash)
    table.insert(0, "experiment", raw["name"])
    return table.to_csv(index=False, lineterminator="\n").encode()


def test_selections_are_gzip_and_decompress_to_the_plain_csv(finished):
    raw, out = finished
    assert not (out / "selections.csv").exists()
    packed = (out / "selections.csv.gz").read_bytes()
    assert packed[:2] == b"\x1f\x8b"  # gzip
    plain = _plain_selections(raw, out)
    assert gzip.decompress(packed) == plain
    assert len(packed) * 8 < len(plain)
    direct = pd.read_csv(out / "selections.csv.gz")  # pandas reads it directly
    assert len(direct) == plain.count(b"\n") - 1 and list(direct.columns[:2]) == ["experiment", "config_hash"]
    cells = sorted((out / "cells").glob("*.sel.csv.gz"))
    assert cells and not list((out / "cells").glob("*.sel.csv"))
    assert all(gzip.decompress(p.read_bytes()).startswith(b"method,") for p in cells)
    assert not list((out / "cells").glob("*.csv"))  # every cell table is gzip CSV
    assert bool(list((out / "cells").glob("*.traj.csv.gz"))) == (raw["setting"] == "online")


def _as_previous_format(folder: Path) -> None:
    """Rewrite ``folder`` as the previous cabench left it: plain ``selections.csv`` and plain cell tables
    sealed by their text's digest, no record of the joined tables."""
    (folder / "selections.csv").write_bytes(gzip.decompress((folder / "selections.csv.gz").read_bytes()))
    (folder / "selections.csv.gz").unlink()
    cells = folder / "cells"
    (cells / "joined.json").unlink()
    for seal in cells.glob("*.ok"):
        files = {}
        for name in json.loads(seal.read_text()):
            data = (cells / name).read_bytes()
            if name.endswith(".gz"):
                (cells / name).unlink()
                name, data = name[:-3], gzip.decompress(data)
                (cells / name).write_bytes(data)
            files[name] = hashlib.sha256(data).hexdigest()
        seal.write_text(json.dumps(files))


def test_a_folder_of_the_previous_format_is_read_and_its_cells_reused(finished, tmp_path):
    raw, out = finished
    now = ResultSet(out.parent).experiments[0]
    old = tmp_path / out.name
    shutil.copytree(out, old)
    _as_previous_format(old)
    assert not list(old.rglob("*.gz"))
    before = ResultSet(tmp_path).experiments[0]
    pd.testing.assert_frame_equal(before.selections, now.selections)
    pd.testing.assert_frame_equal(before.runs, now.runs)
    again = _run(raw, old)  # the new cabench in the old folder: every cell reused, tables in the new format
    assert (again.reused, again.computed) == (again.cells, 0)
    assert not (old / "selections.csv").exists()
    assert gzip.decompress((old / "selections.csv.gz").read_bytes()) == \
        gzip.decompress((out / "selections.csv.gz").read_bytes())
    assert (old / "runs.csv").read_bytes() == (out / "runs.csv").read_bytes()


def _state(folder: Path) -> dict[str, tuple[int, int, str]]:
    """Every file below ``folder`` by its inode, modification time and SHA-256: a rewrite changes the first two."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            st = path.stat()
            out[path.relative_to(folder).as_posix()] = (st.st_ino, st.st_mtime_ns,
                                                        hashlib.sha256(path.read_bytes()).hexdigest())
    return out


def test_a_fully_cached_rerun_rewrites_nothing_and_repairs_an_altered_table(finished, tmp_path):
    raw, out = finished
    folder = tmp_path / out.name
    shutil.copytree(out, folder)
    _run(raw, folder)  # config.yaml records the output folder: the copy's is written once
    assert yaml.safe_load((folder / "config.yaml").read_text())["output"] == str(folder)
    before = _state(folder)
    again = _run(raw, folder)
    assert (again.reused, again.computed) == (again.cells, 0)
    assert _state(folder) == before
    assert list(again.summary["method"]) == list(pd.read_csv(folder / "summary.csv")["method"])
    summary = (folder / "summary.csv").read_bytes()
    (folder / "summary.csv").write_bytes(summary.replace(b",ok,", b",0k,", 1))  # altered by hand
    (folder / "runs.csv").unlink()
    _run(raw, folder)
    after = _state(folder)
    assert {k: v[2] for k, v in after.items() if k != "cells/joined.json"} == \
        {k: v[2] for k, v in before.items() if k != "cells/joined.json"}
    assert after["summary.csv"][:2] != before["summary.csv"][:2]  # written again, as it was


def _size(folder: Path, plain: bool) -> int:
    """Bytes below ``folder``; with ``plain``, every gzip file counted at its decompressed size."""
    return sum(len(gzip.decompress(p.read_bytes())) if plain and p.suffix == ".gz" else p.stat().st_size
               for p in folder.rglob("*") if p.is_file())


def test_results_take_a_fraction_of_the_plain_size(finished):
    """Each per-arm row repeats the experiment, hash, method, budget and repetition of its neighbours, which
    gzip stores as back-references: those tables shrink about 10-25 times. runs.csv, arms.csv and config.yaml
    stay plain, so a small folder as a whole shrinks less: it measures about a fifth here (a tenth at paper
    scale, where the per-arm tables dominate); a third bounds it with room."""
    _, out = finished
    assert _size(out, plain=False) < _size(out, plain=True) / 3


def test_a_file_of_a_name_cabench_writes_is_replaced_only_where_it_begins_as_cabench_writes_it(tmp_path):
    """The one check behind REPORT.md, REPORT.html, report_sections.json, figures.csv, tune.csv and tune.yaml."""
    from cabench.errors import CabenchError
    from cabench.storage import refuse_unless_ours

    path = tmp_path / "tune.csv"
    refuse_unless_ours(path, "s_r,", "a file cabench tune wrote", "move it")  # no file: nothing to refuse
    path.write_text("s_r,s_c\n0.1,0.2\n")
    refuse_unless_ours(path, "s_r,", "a file cabench tune wrote", "move it")
    path.write_text("notes\ns_r,s_c\n")  # the mark, but not at the start
    with pytest.raises(CabenchError) as exc:
        refuse_unless_ours(path, "s_r,", "a file cabench tune wrote", "move it")
    assert str(exc.value) == f"{path}: not a file cabench tune wrote (it does not begin with 's_r,'); move it"
    refuse_unless_ours(path, "s_r,", "a file cabench tune wrote", "move it", within=True)  # held within the head


def test_a_path_holding_a_pipe_a_device_or_a_socket_is_never_replaced_by_a_file(tmp_path):
    """Files are written by renaming a new one over their path, so `data table1 -o PIPE` (or `-o /dev/full` run as
    root) put a CSV where the pipe or device was and said "wrote". Such a path is refused in one line, exit 2, and
    left as it was; through a symbolic link too."""
    import os
    import socket
    import stat

    from typer.testing import CliRunner

    from cabench.cli import app
    from cabench.storage import write_atomic

    pipe, sock, link = tmp_path / "pipe", tmp_path / "sock", tmp_path / "link"
    os.mkfifo(pipe)
    link.symlink_to(pipe)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    try:
        for path, kind in ((pipe, "a named pipe"), (link, "a named pipe"), (sock, "a socket")):
            with pytest.raises(OSError, match=f"^.*{kind} is there, not a file") as exc:
                write_atomic(path, "x\n")
            assert exc.value.filename == str(path)
            done = CliRunner().invoke(app, ["data", "table1", str(DATA / "gsm8k"), "-o", str(path)])
            assert done.exit_code == 2 and done.stderr.startswith(f"error: {path}: {kind} is there, not a file; ")
            assert done.stderr.count("\n") == 1
        assert stat.S_ISFIFO(os.stat(pipe).st_mode) and link.is_symlink() and stat.S_ISSOCK(os.stat(sock).st_mode)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "pipe", "sock"]  # no temporary file left
    finally:
        server.close()
