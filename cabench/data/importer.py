"""``cabench data import``: your own logs to a canonical dataset folder.

A mapping YAML names, for each canonical column (SPEC §1), the source column
that holds it (``columns``) or a constant (``constants``), optional unit
factors (``scale``, e.g. ``latency_s: 0.001`` for milliseconds) and the
``dataset`` metadata. Without a ``config_id`` column, the id is built from the
configuration metadata. The result is validated exactly like the loader.
"""

from __future__ import annotations

import datetime
import difflib
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

import cabench
from cabench.data.dataset import file_digest
from cabench.data.io import read_table, write_logs, write_metadata
from cabench.data.readers import read_bfcl
from cabench.data.schema import COLUMNS, validate_logs
from cabench.errors import CabenchError
from cabench.storage import publish_folder, staging_folder
from cabench.yamlio import load_yaml, yaml_problem

MAPPING_KEYS = ("columns", "constants", "scale", "dataset")


def _mapping(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise CabenchError(f"{path}: mapping file not found")
    try:
        raw = load_yaml(path.read_text())
    except yaml.YAMLError as exc:
        raise CabenchError(f"{path}: malformed YAML ({yaml_problem(exc)})") from None
    except UnicodeDecodeError:
        raise CabenchError(f"{path}: not a text file; a mapping is YAML") from None
    if not isinstance(raw, dict):
        raise CabenchError(f"{path}: expected a mapping with keys {', '.join(MAPPING_KEYS)}")
    for key in raw:
        if key not in MAPPING_KEYS:
            near = difflib.get_close_matches(str(key), MAPPING_KEYS, n=1)
            raise CabenchError(f"{path}: {key}: unknown key" + (f"; did you mean '{near[0]}'?" if near else ""))
    for key in ("columns", "constants", "scale", "dataset"):
        value = raw.get(key) or {}
        if not isinstance(value, dict):
            raise CabenchError(f"{path}: {key}: expected a mapping")
        for name in value if key in ("columns", "constants", "scale") else ():
            if name not in COLUMNS:
                near = difflib.get_close_matches(str(name), list(COLUMNS), n=1)
                hint = f"; did you mean '{near[0]}'?" if near else f"; canonical columns: {', '.join(COLUMNS)}"
                raise CabenchError(f"{path}: {key}.{name}: not a canonical column{hint}")
            item = value[name]
            if key == "columns" and not isinstance(item, (str, int)):
                raise CabenchError(f"{path}: columns.{name}: expected the name of one source column, got {item!r}")
            if key == "constants" and (item is None or isinstance(item, (list, dict))):
                raise CabenchError(f"{path}: constants.{name}: expected one value (text or number), got {item!r}")
        raw[key] = value
    return raw


def parse_settings(items: list[str]) -> dict[str, Any]:
    """``--set key=value`` items as constants (values read as YAML scalars: 256 is a number)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CabenchError(f"--set {item}: expected key=value, e.g. --set prompting=cot")
        if key not in COLUMNS:
            near = difflib.get_close_matches(key, list(COLUMNS), n=1)
            hint = f"; did you mean '{near[0]}'?" if near else f"; canonical columns: {', '.join(COLUMNS)}"
            raise CabenchError(f"--set {item}: '{key}' is not a canonical column{hint}")
        try:
            parsed = load_yaml(value) if value.strip() else None
        except yaml.YAMLError:
            parsed = value
        if parsed is None or isinstance(parsed, (list, dict)):
            raise CabenchError(f"--set {item}: expected one value (text or number)")
        out[key] = parsed
    return out


FORMATS = ("canonical", "bfcl")


MISSING = ("error", "drop-instances", "drop-configs")


def fill_holes(frame: pd.DataFrame, missing: str, label: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Make every configuration's instance set the same, as ``missing`` says (SPEC §1 needs it).

    ``error``: refuse, saying how many (configuration, instance) cells are missing; ``drop-configs``:
    keep the configurations evaluated on every instance any of them has; ``drop-instances``: keep the
    instances every configuration was evaluated on. Returns the frame and what was dropped.
    """
    if missing not in MISSING:
        raise CabenchError(f"--missing: '{missing}' is not one of {', '.join(MISSING)}")
    if frame[["config_id", "instance_id"]].isna().any().any():
        return frame, {}  # reported by validation, row by row
    sets = frame.groupby("config_id", sort=False)["instance_id"].agg(lambda s: frozenset(map(str, s)))
    union = frozenset().union(*sets)
    if all(st == union for st in sets):
        return frame, {}
    holes = sum(len(union) - len(st) for st in sets)
    if missing == "error":
        short = int(sum(st != union for st in sets))
        raise CabenchError(f"{label}: {holes} (configuration, instance) cells are missing in {short} of {len(sets)} "
                           "configurations; pass --missing drop-configs (keep configurations with every instance) "
                           "or --missing drop-instances (keep instances every configuration has)")
    if missing == "drop-configs":
        keep = [c for c, st in sets.items() if st == union]
        if len(keep) < 2:
            raise CabenchError(f"{label}: --missing drop-configs keeps {len(keep)} configuration(s); try "
                               "--missing drop-instances")
        dropped = {str(c): f"{len(union) - len(st)} of {len(union)} instances missing"
                   for c, st in sets.items() if st != union}
        return frame[frame["config_id"].isin(keep)], {"policy": missing, "configurations": dropped}
    common = frozenset.intersection(*sets)
    if not common:
        raise CabenchError(f"{label}: no instance was evaluated by every configuration; try --missing drop-configs")
    out = frame[frame["instance_id"].astype(str).isin(common)]
    return out, {"policy": missing, "instances_dropped": len(union) - len(common), "instances_kept": len(common)}


def import_logs(source: Path, mapping_path: Path | None, out: Path, force: bool = False,
                settings: dict[str, Any] | None = None, fmt: str = "canonical", missing: str = "error") -> Path:
    """Map, validate and write ``source`` as a dataset folder ``out``.

    Columns that already have their canonical names need no mapping; a mapping
    (or ``settings``, from ``--set key=value``) only renames, adds constants and
    scales. An existing ``out`` is refused unless ``force``; the folder is
    written in full beside ``out`` and then moved into place atomically, so an
    interrupted import never leaves a partial dataset or loses the old one.
    ``dataset.yaml`` records the provenance: format, source and its SHA-256,
    options, row counts, cabench version and date.
    """
    if out.exists() and not out.is_dir():
        raise CabenchError(f"{out}: exists and is not a folder; pass --out with a new dataset folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise CabenchError(f"{out}: folder exists and is not empty; pass another --out, or --force to replace it "
                           "(the old folder is replaced only once the new one is complete)")
    if fmt not in FORMATS:
        near = difflib.get_close_matches(fmt, FORMATS, n=1)
        raise CabenchError(f"--format: '{fmt}' is not one of {', '.join(FORMATS)}"
                           + (f"; did you mean '{near[0]}'?" if near else ""))
    mapping = _mapping(mapping_path) if mapping_path is not None else {k: {} for k in MAPPING_KEYS}
    info: dict[str, Any] = {"format": fmt, "files": [source]}
    if fmt == "canonical":
        if not source.is_file():
            raise CabenchError(f"{source}: source log file not found")
        frame = read_table(source)
    else:
        frame, info = read_bfcl(source)
        if settings:
            for name in settings:  # --set replaces what the reader filled in
                frame = frame.drop(columns=[name], errors="ignore")
    columns, constants, scale = dict(mapping["columns"]), {**mapping["constants"], **(settings or {})}, \
        mapping["scale"]
    if settings:
        for name in settings:
            columns.pop(name, None)  # --set wins over the mapping
    for name in COLUMNS:  # canonical names need no mapping
        if name not in columns and name not in constants and name in frame.columns:
            columns[name] = name
    both = sorted(set(columns) & set(constants))
    if both:
        raise CabenchError(f"{mapping_path}: {both[0]} is given both as a column and as a constant; keep one")
    canonical = pd.DataFrame(index=frame.index)
    for name in COLUMNS:
        if name in columns:
            src = columns[name]
            if src not in frame.columns:
                near = difflib.get_close_matches(str(src), [str(c) for c in frame.columns], n=1)
                hint = f"; did you mean '{near[0]}'?" if near else f"; it has {', '.join(map(str, frame.columns))}"
                raise CabenchError(f"{source}: no column '{src}' (mapped to {name} in {mapping_path}){hint}")
            canonical[name] = frame[src]
        elif name in constants:
            canonical[name] = constants[name]
        elif name != "config_id":
            where = mapping_path or source
            raise CabenchError(f"{where}: {name}: no such column; map a source column to it (--mapping) or give "
                               f"a constant (--set {name}=...)")
    for name, factor in scale.items():
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 0:
            raise CabenchError(f"{mapping_path}: scale.{name}: expected a positive number, got {factor!r}")
        canonical[name] = pd.to_numeric(canonical[name], errors="coerce") * factor
    if "config_id" not in canonical:
        canonical["config_id"] = (canonical["model"].astype(str) + "_t" + canonical["temperature"].astype(str)
                                  + "_g" + canonical["max_new_tokens"].astype(str) + "_"
                                  + canonical["prompting"].astype(str))
    label = f"{source} (mapped by {mapping_path})" if mapping_path else str(source)
    canonical, holes = fill_holes(canonical, missing, label)
    valid = validate_logs(canonical[list(COLUMNS)], label)
    provenance = {
        "format": fmt, "sources": [{"path": str(p.resolve()), "sha256": file_digest(p)} for p in info["files"]],
        "options": {"mapping": str(mapping_path.resolve()) if mapping_path else None, "set": settings or {},
                    "missing": missing},
        **({"holes": holes} if holes else {}),
        "rows": {"read": int(len(frame)), "kept": int(len(valid)), "dropped": int(len(frame) - len(valid))},
        **({"dropped_configurations": info["dropped_configurations"]} if info.get("dropped_configurations") else {}),
        **({"metadata_defaults": info["metadata_defaults"]} if info.get("metadata_defaults") else {}),
        **({"unscored_files": info["unscored_files"]} if info.get("unscored_files") else {}),
        "cabench_version": cabench.__version__,
        "imported": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    meta = {"name": out.name, "description": f"Imported from {source.name}", "provenance": provenance,
            "surrogate": False, "licence": "unspecified", **mapping["dataset"]}
    if not isinstance(meta["surrogate"], bool):
        raise CabenchError(f"{mapping_path}: dataset.surrogate: expected true or false")
    if not isinstance(meta.get("name"), str) or not meta["name"].strip():
        raise CabenchError(f"{mapping_path}: dataset.name: expected a non-empty text, got {meta.get('name')!r}")
    try:
        staged = staging_folder(out)
        write_logs(valid, staged / "logs.csv.gz")
        write_metadata(meta, staged / "dataset.yaml")
        publish_folder(staged, out)
    except OSError as exc:
        raise CabenchError(f"{exc.filename or out}: cannot write the dataset ({exc.strerror}); "
                           "pass --out with a writable place") from None
    return out
